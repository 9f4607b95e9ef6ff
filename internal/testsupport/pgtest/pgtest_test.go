package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestClusterServesOnlyItsSocket: the package's cluster answers on the
// unix socket in its own directory and listens on no TCP address.
func TestClusterServesOnlyItsSocket(t *testing.T) {
	conn := connect(t, Database(t))
	var listen, sockets string
	if err := conn.QueryRow(context.Background(), "SELECT current_setting('listen_addresses'), current_setting('unix_socket_directories')").Scan(&listen, &sockets); err != nil {
		t.Fatal(err)
	}
	if listen != "" {
		t.Errorf("listen_addresses = %q, want none", listen)
	}
	c := SharedCluster(t)
	if sockets != c.Dir {
		t.Errorf("unix_socket_directories = %q, want the cluster's directory %q", sockets, c.Dir)
	}
	t.Logf("cluster started in %v (initdb and pg_ctl start -w)", c.StartDuration)
}

// TestDatabasesAreFresh: each call gives a database of its own, empty, and
// the test's database is gone once the test ends.
func TestDatabasesAreFresh(t *testing.T) {
	var first string
	t.Run("first", func(t *testing.T) {
		first = Database(t)
		if _, err := connect(t, first).Exec(context.Background(), "CREATE TABLE planted (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	second := Database(t)
	if second == first {
		t.Fatal("two tests were given the same database")
	}
	var n int
	if err := connect(t, second).QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE tablename = 'planted'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a fresh database holds another test's table")
	}
	if _, err := pgx.Connect(context.Background(), first); err == nil {
		t.Error("the first test's database outlived its test")
	}
}

// TestStaleClusterIsSwept: a cluster whose owning process died without
// stopping it is stopped and removed by the next start, and a cluster
// whose owner lives is left alone.
func TestStaleClusterIsSwept(t *testing.T) {
	live := SharedCluster(t)
	stale, err := start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stale.Stop() })
	// A process id that is surely gone: a child that has exited and been
	// waited for.
	child := exec.Command(os.Args[0], "-test.run=^$")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := child.Process.Pid
	if err := os.WriteFile(filepath.Join(stale.Dir, ownerFile), []byte(strconv.Itoa(deadPID)), 0o644); err != nil {
		t.Fatal(err)
	}
	postmaster := postmasterPID(t, stale.Dir)
	if !processAlive(postmaster) {
		t.Fatal("the stale cluster's server is not running before the sweep")
	}
	next := NewCluster(t)
	if _, err := os.Stat(stale.Dir); !os.IsNotExist(err) {
		t.Errorf("stale cluster's directory still there after the next start (%v)", err)
	}
	if processAlive(postmaster) {
		t.Error("stale cluster's server still running after the next start")
	}
	for _, c := range []*Cluster{live, next} {
		if _, err := os.Stat(filepath.Join(c.Dir, "data", "postmaster.pid")); err != nil {
			t.Errorf("a live owner's cluster was swept: %v", err)
		}
	}
}

// TestStopStopsTheServer: Stop leaves no server and no directory.
func TestStopStopsTheServer(t *testing.T) {
	c := NewCluster(t)
	postmaster := postmasterPID(t, c.Dir)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if processAlive(postmaster) {
		t.Error("server still running after Stop")
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory still there after Stop (%v)", err)
	}
}

func postmasterPID(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
