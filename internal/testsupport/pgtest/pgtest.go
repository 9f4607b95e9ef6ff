// Package pgtest starts throwaway PostgreSQL servers for tests: one cluster
// per test package (started on first use, stopped when the package's tests
// end) and a fresh database per test.
//
// A package that uses it routes its TestMain through Main:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// and a test asks for a database by URL:
//
//	url := pgtest.Database(t)
//
// The cluster is made by initdb from the Debian package's binaries
// (PostgreSQL 15 first), as the postgres system user when the tests run as
// root (initdb and postgres refuse root), in a directory under the system's
// temporary directory that it owns. It listens only on a unix socket in that
// directory, never on TCP. It is stopped with pg_ctl stop -m immediate after
// the package's tests; a test process that dies before that leaves its
// cluster running, so every start first stops and removes the clusters
// whose owning process is gone.
//
// Without the binaries (or without the postgres user when running as root)
// a test skips, except under CI=true, where it fails: CI installs the
// package. Only Linux runs the clusters (the Debian package's layout);
// elsewhere the tests skip as a platform condition.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// rootDirName is the directory under os.TempDir() that holds every
// cluster, so a later start can find the clusters an earlier, killed test
// process left running.
const rootDirName = "stateguard-pgtest"

// ownerFile names, inside a cluster's directory, the file holding the
// process id of the test process that owns the cluster.
const ownerFile = "owner.pid"

// Cluster is one running throwaway server.
type Cluster struct {
	// Dir holds the data directory (Dir/data) and the server's socket.
	Dir string
	// StartDuration is how long initdb and pg_ctl start took together.
	StartDuration time.Duration

	bin     string
	asUser  string // the system user the server runs as; "" for the current one
	dbUser  string // the database superuser initdb made
	stopped bool
	mu      sync.Mutex
}

var (
	shared     *Cluster
	sharedErr  error
	sharedOnce sync.Once
	inMain     bool
	databases  atomic.Int64
)

// Main runs the package's tests and stops the package's cluster, if one
// was started, before returning m.Run's code.
func Main(m *testing.M) int {
	inMain = true
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Database creates a fresh, empty database in the package's cluster and
// returns a pgx URL for it (a unix socket, the cluster's superuser, no
// password). The database is dropped when t ends.
func Database(t testing.TB) string {
	t.Helper()
	c := SharedCluster(t)
	url, drop, err := c.NewDatabase()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return url
}

// NewDatabase creates a fresh, empty database in the cluster and returns
// its URL (as Database does) and a function that drops it, for a caller
// without a testing.TB of its own (a script test's setup).
func (c *Cluster) NewDatabase() (url string, drop func() error, err error) {
	name := fmt.Sprintf("t%d_%d", os.Getpid(), databases.Add(1))
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		return "", nil, fmt.Errorf("connecting to the cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("CREATE DATABASE: %v", err)
	}
	drop = func() error {
		conn, err := pgx.Connect(ctx, c.URL("postgres"))
		if err != nil {
			return fmt.Errorf("connecting to drop a test's database: %v", err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("DROP DATABASE: %v", err)
		}
		return nil
	}
	return c.URL(name), drop, nil
}

// SharedCluster returns the package's cluster, starting it on first use.
// The package's TestMain must call Main, which stops it.
func SharedCluster(t testing.TB) *Cluster {
	t.Helper()
	if !inMain {
		t.Fatal("pgtest: the package's TestMain must call pgtest.Main (it stops the shared cluster)")
	}
	available(t)
	sharedOnce.Do(func() { shared, sharedErr = start(nil) })
	if sharedErr != nil {
		t.Fatalf("pgtest: starting the package's cluster: %v", sharedErr)
	}
	return shared
}

// NewCluster starts a cluster of t's own (for a test that stops or kills
// its server) and stops it when t ends.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	return NewClusterOn(t, nil)
}

// NewClusterOn starts a cluster of t's own that also listens on TCP at
// each of addrs (addresses that must already exist on this machine, such
// as the near ends of a test's virtual links) and accepts password logins
// (scram-sha-256) there; loopback and the socket stay as initdb made them.
// It is stopped when t ends.
func NewClusterOn(t testing.TB, addrs []string) *Cluster {
	t.Helper()
	available(t)
	c, err := start(addrs)
	if err != nil {
		t.Fatalf("pgtest: starting a cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// CreateLogin makes a role that logs in with password and owns a new
// database of the same name, as an operator would set one up for a fleet.
func (c *Cluster) CreateLogin(t testing.TB, role, password string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, c.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connecting to the cluster: %v", err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		"CREATE ROLE " + pgx.Identifier{role}.Sanitize() + " LOGIN PASSWORD " + quoteLiteral(password),
		"CREATE DATABASE " + pgx.Identifier{role}.Sanitize() + " OWNER " + pgx.Identifier{role}.Sanitize(),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("pgtest: making the login role: %v", err)
		}
	}
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// TCPURL is a URL for database db as role over TCP at addr (one of the
// addresses NewClusterOn was given), without the password: a client reads
// it from its password file (PGPASSFILE), as a fleet's workers would.
func (c *Cluster) TCPURL(addr, db, role string) string {
	return "postgres://" + role + "@" + addr + ":5432/" + db + "?sslmode=disable"
}

// Kill stops the server at once (pg_ctl stop -m immediate), as a crash
// would, keeping its data for Restart.
func (c *Cluster) Kill() error {
	if out, err := c.run("pg_ctl", "-D", filepath.Join(c.Dir, "data"), "-m", "immediate", "-w", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop -m immediate: %v\n%s", err, out)
	}
	return nil
}

// Restart starts a killed server again on the same data, which recovers
// from its write-ahead log.
func (c *Cluster) Restart() error {
	return c.pgStart()
}

// RequirePasswordsOnSocket makes the cluster's socket ask every role but
// the superuser for its password (scram-sha-256), as a server an operator
// set up would, and restarts the server so that the rule holds for the
// next connection. For a cluster of the test's own (NewCluster).
func (c *Cluster) RequirePasswordsOnSocket() error {
	hba := filepath.Join(c.Dir, "data", "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		return err
	}
	// The first line that matches decides: these come before initdb's.
	rules := "local all " + c.dbUser + " trust\nlocal all all scram-sha-256\n"
	if err := os.WriteFile(hba, append([]byte(rules), old...), 0); err != nil {
		return err
	}
	if err := c.Kill(); err != nil {
		return err
	}
	return c.Restart()
}

// SocketURL is a URL for database db as role on the cluster's socket,
// without a password (a client reads it from its password file).
func (c *Cluster) SocketURL(db, role string) string {
	return "postgres:///" + db + "?host=" + c.Dir + "&user=" + role + "&sslmode=disable"
}

// URL is a pgx URL for database db on the cluster's socket.
func (c *Cluster) URL(db string) string {
	return "postgres:///" + db + "?host=" + c.Dir + "&user=" + c.dbUser + "&sslmode=disable"
}

// Stop stops the server at once (pg_ctl stop -m immediate) and removes its
// directory. Stopping twice is harmless.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	return stopAndRemove(c.bin, c.asUser, c.Dir)
}

// skipOrFail skips t outside CI and fails it under CI=true, where the
// package is installed.
func skipOrFail(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("pgtest: %s (CI installs the postgresql package: see .ci/run)", why)
	}
	t.Skip("pgtest: " + why + " (install the postgresql package to run this test)")
}

// available skips or fails t when no cluster can be made here.
func available(t testing.TB) {
	t.Helper()
	why, platform := unavailable()
	switch {
	case why == "":
	case platform:
		t.Skip("platform condition PostgreSQLCluster: " + why)
	default:
		skipOrFail(t, why)
	}
}

// unavailable says why no cluster can be made here ("" when one can), and
// whether that is a platform condition rather than a missing package.
func unavailable() (why string, platform bool) {
	if runtime.GOOS != "linux" {
		return "the throwaway clusters run on Linux only", true
	}
	if _, err := binDir(); err != nil {
		return err.Error(), false
	}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return "running as root and no postgres system user to run the server as", false
		}
		if _, err := exec.LookPath("runuser"); err != nil {
			return "running as root and no runuser to become the postgres user", false
		}
	}
	return "", false
}

// Start starts a cluster for a program that is not a test (a benchmark
// tool under tools/), which must Stop it; where a test would skip, it
// returns an error. Like every cluster here it listens only on its socket.
func Start() (*Cluster, error) {
	if why, _ := unavailable(); why != "" {
		return nil, errors.New(why)
	}
	return start(nil)
}

// ServerPID is the process id of the cluster's postmaster, the parent of
// every server process (its first line of postmaster.pid).
func (c *Cluster) ServerPID() (int, error) {
	raw, err := os.ReadFile(filepath.Join(c.Dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	return strconv.Atoi(strings.TrimSpace(first))
}

// binDir finds the server's binaries, the highest version first, with 15
// (the version the project targets) preferred when present.
func binDir() (string, error) {
	if _, err := os.Stat("/usr/lib/postgresql/15/bin/initdb"); err == nil {
		return "/usr/lib/postgresql/15/bin", nil
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(found) == 0 {
		return "", errors.New("no PostgreSQL server binaries under /usr/lib/postgresql")
	}
	sort.Slice(found, func(i, j int) bool { return versionOf(found[i]) > versionOf(found[j]) })
	return filepath.Dir(found[0]), nil
}

func versionOf(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// start sweeps stale clusters, then makes and starts a new one, listening
// on TCP at addrs too when any are given.
func start(addrs []string) (*Cluster, error) {
	began := time.Now()
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dbUser: "postgres"}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
	} else if u, err := user.Current(); err == nil {
		c.dbUser = u.Username
	}
	root := filepath.Join(os.TempDir(), rootDirName)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	sweepStale(bin, c.asUser, root)
	dir, err := os.MkdirTemp(root, "c")
	if err != nil {
		return nil, err
	}
	c.Dir = dir
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	if c.asUser != "" {
		u, err := user.Lookup(c.asUser)
		if err != nil {
			return nil, err
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := c.run("initdb", "-D", data, "-A", "trust", "-U", c.dbUser, "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		stopAndRemove(bin, c.asUser, dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// Only the unix socket in the cluster's own directory: no TCP. fsync
	// off: the cluster is thrown away, and a killed server (the fault tests
	// stop it with -m immediate) still finds its WAL in the page cache;
	// what that leaves untested is a power cut, which no test here makes.
	conf := fmt.Sprintf("\nlisten_addresses = '%s'\nunix_socket_directories = '%s'\nfsync = off\nshared_buffers = 16MB\nmax_connections = 60\n", strings.Join(addrs, ","), dir)
	if len(addrs) > 0 {
		// initdb's lines trust loopback only; every other client of the
		// addresses given logs in with a password.
		hba, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
		if err == nil {
			_, err = hba.WriteString("\nhost all all 0.0.0.0/0 scram-sha-256\n")
			if cerr := hba.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			stopAndRemove(bin, c.asUser, dir)
			return nil, err
		}
	}
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(conf)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		stopAndRemove(bin, c.asUser, dir)
		return nil, err
	}
	if err := c.pgStart(); err != nil {
		stopAndRemove(bin, c.asUser, dir)
		return nil, err
	}
	c.StartDuration = time.Since(began)
	return c, nil
}

// pgStart starts the cluster's server and waits until it accepts
// connections.
func (c *Cluster) pgStart() error {
	data := filepath.Join(c.Dir, "data")
	if out, err := c.run("pg_ctl", "-D", data, "-l", filepath.Join(c.Dir, "server.log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.Dir, "server.log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// run runs one of the server's programs as the cluster's system user.
func (c *Cluster) run(prog string, args ...string) ([]byte, error) {
	return runAs(c.bin, c.asUser, prog, args...)
}

func runAs(bin, asUser, prog string, args ...string) ([]byte, error) {
	path := filepath.Join(bin, prog)
	var cmd *exec.Cmd
	if asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", asUser, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	// A directory the server's user can enter: the test's own may be
	// private to root.
	cmd.Dir = "/"
	return cmd.CombinedOutput()
}

// stopAndRemove stops the server of the cluster in dir, if one runs, and
// removes the directory.
func stopAndRemove(bin, asUser, dir string) error {
	data := filepath.Join(dir, "data")
	var stopErr error
	if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err == nil {
		if out, err := runAs(bin, asUser, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"); err != nil {
			stopErr = fmt.Errorf("pg_ctl stop -m immediate: %v\n%s", err, out)
		}
	}
	if err := os.RemoveAll(dir); err != nil && stopErr == nil {
		stopErr = err
	}
	return stopErr
}

// sweepStale stops and removes every cluster under root whose owning test
// process is gone (killed before its TestMain could stop the server).
func sweepStale(bin, asUser, root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		raw, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // being made right now, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
		if err != nil || processAlive(pid) {
			continue
		}
		stopAndRemove(bin, asUser, dir)
	}
}

// processAlive reads the process's state from /proc: a zombie is gone
// (a server that pg_ctl started is reparented, and in a container its new
// parent may never reap it).
func processAlive(pid int) bool {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name's closing parenthesis.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
