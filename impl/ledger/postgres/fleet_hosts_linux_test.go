package postgres

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// testHost is a host of a test's own on this machine: a network namespace
// linked to this one by a virtual Ethernet pair, far end inside it.
type testHost struct {
	ns         string
	near, far  string // the pair's ends
	nearAddr   string // the address this machine has on the link
	farAddress string // the host's address
}

// makeHosts makes n hosts and removes them when t ends. It needs root and
// ip(8) from iproute2; without them the test skips, except under CI=true,
// where it fails.
func makeHosts(t *testing.T, n int) []testHost {
	t.Helper()
	why := ""
	if os.Geteuid() != 0 {
		why = "making network namespaces needs root"
	} else if _, err := osexec.LookPath("ip"); err != nil {
		why = "no ip command (iproute2)"
	}
	if why != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (CI runs as root with iproute2)", why)
		}
		t.Skip(why)
	}
	ip := func(args ...string) {
		t.Helper()
		if out, err := osexec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	tag := strconv.Itoa(os.Getpid() % 100000)
	var hosts []testHost
	for i := 0; i < n; i++ {
		h := testHost{
			ns:         fmt.Sprintf("sgfleet-%s-%d", tag, i),
			near:       fmt.Sprintf("sgf%sn%d", tag, i),
			far:        fmt.Sprintf("sgf%sf%d", tag, i),
			nearAddr:   fmt.Sprintf("10.231.%d.1", i+1),
			farAddress: fmt.Sprintf("10.231.%d.2", i+1),
		}
		ip("netns", "add", h.ns)
		t.Cleanup(func() {
			osexec.Command("ip", "netns", "del", h.ns).Run()
			osexec.Command("ip", "link", "del", h.near).Run()
		})
		ip("link", "add", h.near, "type", "veth", "peer", "name", h.far)
		ip("link", "set", h.far, "netns", h.ns)
		ip("addr", "add", h.nearAddr+"/24", "dev", h.near)
		ip("link", "set", h.near, "up")
		ip("-n", h.ns, "addr", "add", h.farAddress+"/24", "dev", h.far)
		ip("-n", h.ns, "link", "set", h.far, "up")
		ip("-n", h.ns, "link", "set", "lo", "up")
		hosts = append(hosts, h)
	}
	return hosts
}

// linkBytes is how many bytes this machine's end of a link has moved.
func linkBytes(t *testing.T, dev string) int64 {
	t.Helper()
	var total int64
	for _, dir := range []string{"rx_bytes", "tx_bytes"} {
		raw, err := os.ReadFile(filepath.Join("/sys/class/net", dev, "statistics", dir))
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// TestFleetAcrossHosts runs a fleet on two hosts of its own (network
// namespaces, each with its own address on a virtual link to this
// machine): two workers on each reach the server over their host's link,
// as a role that logs in with the password from its password file
// (PGPASSFILE), and do every step of 40 tasks each. Every step is
// acknowledged, each link carried the traffic, and the doctor, run as the
// same role, finds the ledger healthy.
func TestFleetAcrossHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("makes network namespaces and starts worker processes")
	}
	hosts := makeHosts(t, 2)
	c := pgtest.NewClusterOn(t, []string{hosts[0].nearAddr, hosts[1].nearAddr})
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		t.Fatal(err)
	}
	const role = "fleet_worker"
	password := hex.EncodeToString(secret)
	c.CreateLogin(t, role, password)
	passfile := filepath.Join(t.TempDir(), "pgpass")
	var lines strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&lines, "%s:5432:%s:%s:%s\n", h.nearAddr, role, role, password)
	}
	if err := os.WriteFile(passfile, []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", passfile)
	// The ledger is made by the role the workers log in as: the doctor
	// counts a schema another role owns as damage.
	l := openForTest(t, c.TCPURL(hosts[0].nearAddr, role, role), ledger.Options{AllowExternalACL: onWindows}, settings{schema: "fleet"})

	before := make([]int64, len(hosts))
	for i, h := range hosts {
		before[i] = linkBytes(t, h.near)
	}
	var workers []*fleetWorker
	for i, h := range hosts {
		for j := 0; j < 2; j++ {
			o := fleetOrders{URL: c.TCPURL(h.nearAddr, role, role), Schema: "fleet", Name: fmt.Sprintf("host%d-w%d", i, j), Num: 2*i + j, Tasks: 40}
			workers = append(workers, startFleetWorker(t, []string{"ip", "netns", "exec", h.ns}, []string{"PGPASSFILE=" + passfile}, o, nil))
		}
	}
	for _, w := range workers {
		w.wait(t, false)
	}
	tasks, steps := checkAcknowledged(t, l, workers)
	if want := 4 * 40; tasks != want || steps != want*len(fleetSteps) {
		t.Errorf("%d tasks and %d steps acknowledged, want %d and %d", tasks, steps, want, want*len(fleetSteps))
	}
	for i, h := range hosts {
		moved := linkBytes(t, h.near) - before[i]
		// Each of a host's 400 calls is a few round trips of at least a
		// hundred bytes.
		if moved < 100_000 {
			t.Errorf("host %d's link moved %d bytes during the fleet's run", i, moved)
		}
		t.Logf("host %d's link moved %d bytes", i, moved)
	}
}
