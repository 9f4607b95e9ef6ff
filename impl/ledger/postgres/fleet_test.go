package postgres

// The fleet tests run workers as processes of their own (this test binary,
// started again with fleetWorkerEnv set), each doing every step of a
// task's life through the Go API and printing one line for each step the
// ledger acknowledged. The tests then hurt the fleet (kill workers, kill
// the server, cut a connection) and check that every acknowledged step is
// in the ledger and that the doctor finds it healthy.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// fleetWorkerEnv carries a worker's orders (a fleetOrders in JSON) to a
// worker process; TestMain runs the worker instead of the tests when it is
// set.
const fleetWorkerEnv = "STATEGUARD_FLEET_WORKER"

// fleetOrders tell one worker process what to do.
type fleetOrders struct {
	URL    string
	Schema string
	Name   string // the worker's name in the test's messages
	Num    int    // the first field of the worker's task ids
	Tasks  int
	// Patience is how long a worker whose call failed keeps asking the
	// ledger (a read, every 50 ms) before it goes on: a worker rides out
	// a server restart, as a real one would.
	Patience time.Duration
}

// fleetSteps are the steps of a task's life, in order; a worker prints
// "ack STEP ID" after the ledger acknowledged one and "fail STEP ID" when
// it answered an error (the task's later steps are then skipped).
var fleetSteps = []string{"create", "start", "heartbeat", "close", "deliver"}

// runFleetWorker is a worker process's whole life. Its exit status is 0
// unless it could not start or the ledger stopped answering for good.
func runFleetWorker(raw string) int {
	var o fleetOrders
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, "worker orders:", err)
		return 2
	}
	ctx := context.Background()
	l, err := open(ctx, o.URL, ledger.Options{AllowExternalACL: onWindows, BusyTimeout: 10 * time.Second}, settings{schema: o.Schema})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker open:", err)
		return 2
	}
	defer l.Close()
	for i := 0; i < o.Tasks; i++ {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012x", o.Num, i)
		for _, step := range fleetSteps {
			var err error
			switch step {
			case "create":
				_, err = l.Create(ledger.CreateParams{TaskID: id})
			case "start":
				_, err = l.Start(id)
			case "heartbeat":
				_, err = l.Heartbeat(id)
			case "close":
				_, err = l.CloseTask(id, ledger.StatusSucceeded, ledger.CodeCompleted)
			case "deliver":
				_, err = l.SetDelivery(id, ledger.DeliveryDelivered, ledger.CodeTransportAcknowledged)
			}
			if err != nil {
				fmt.Printf("fail %s %s\n", step, id)
				fmt.Fprintf(os.Stderr, "worker %s: %s: %v\n", o.Name, step, err)
				if !waitForLedger(l, o.Patience) {
					fmt.Fprintln(os.Stderr, "worker: the ledger did not answer again")
					return 3
				}
				break
			}
			fmt.Printf("ack %s %s\n", step, id)
		}
	}
	return 0
}

// waitForLedger asks the ledger until it answers (a missing task is an
// answer) or patience runs out.
func waitForLedger(l *ledger.Ledger, patience time.Duration) bool {
	deadline := time.Now().Add(patience)
	for {
		_, err := l.Get("ffffffff-ffff-4fff-bfff-ffffffffffff")
		if err == nil || errors.Is(err, ledger.ErrTaskNotFound) {
			return true
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "worker: last answer:", err)
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fleetWorker is a started worker process and the steps it acknowledged.
type fleetWorker struct {
	cmd  *osexec.Cmd
	name string
	done chan struct{}

	mu    sync.Mutex
	acked map[string]int // task id -> how many of fleetSteps were acknowledged
	lines int            // ack lines read so far
	fails int
	// ackedAfterFail counts the steps acknowledged after the worker's
	// first failure.
	ackedAfterFail int
}

// startFleetWorker starts a worker process, prefixed by wrap (e.g. to run
// it in a network namespace) and with env added to its environment, and
// reads its lines as they come. onAck, if set, is called with the worker's
// count of acknowledged steps after each.
func startFleetWorker(t *testing.T, wrap, env []string, o fleetOrders, onAck func(w *fleetWorker, n int)) *fleetWorker {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, wrap...), self, "-test.run=^$")
	cmd := osexec.Command(args[0], args[1:]...)
	cmd.Env = append(append(os.Environ(), env...), fleetWorkerEnv+"="+string(raw))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &fleetWorker{cmd: cmd, name: o.Name, done: make(chan struct{}), acked: map[string]int{}}
	go w.read(t, out, onAck)
	return w
}

func (w *fleetWorker) read(t *testing.T, out io.Reader, onAck func(*fleetWorker, int)) {
	defer close(w.done)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			t.Errorf("worker %s printed %q", w.name, sc.Text())
			continue
		}
		w.mu.Lock()
		switch f[0] {
		case "ack":
			w.acked[f[2]]++
			w.lines++
			if w.fails > 0 {
				w.ackedAfterFail++
			}
		case "fail":
			w.fails++
		}
		n := w.lines
		w.mu.Unlock()
		if f[0] == "ack" && onAck != nil {
			onAck(w, n)
		}
	}
}

// wait waits for the worker's process and its last line; killed says
// whether the test killed it.
func (w *fleetWorker) wait(t *testing.T, killed bool) {
	t.Helper()
	// Every line first: Wait closes the pipe, and lines still in it
	// would be lost.
	<-w.done
	err := w.cmd.Wait()
	if err != nil && !killed {
		t.Errorf("worker %s: %v", w.name, err)
	}
}

// checkAcknowledged checks that the ledger holds every step the workers
// were answered for, and that its doctor finds it healthy.
func checkAcknowledged(t *testing.T, l *ledger.Ledger, workers []*fleetWorker) (tasks, steps int) {
	t.Helper()
	for _, w := range workers {
		w.mu.Lock()
		for id, n := range w.acked {
			steps += n
			tasks++
			task, err := l.Get(id)
			if err != nil {
				t.Errorf("task %s, %d steps acknowledged: %v", id, n, err)
				continue
			}
			if want := fleetStatusAfter(n); !want(task) {
				t.Errorf("task %s after %d acknowledged steps: status %s, delivery %s", id, n, task.Status, task.DeliveryStatus)
			}
		}
		w.mu.Unlock()
	}
	rep, err := l.Doctor()
	if err != nil {
		t.Fatalf("doctor: %v", err)
	}
	if !rep.Healthy || !rep.QuickCheckOK {
		t.Errorf("doctor after the fleet: %+v", rep)
	}
	return tasks, steps
}

// fleetStatusAfter says what a task may look like once its first n steps
// were acknowledged (a later step may have been done without its answer
// reaching the worker).
func fleetStatusAfter(n int) func(ledger.Task) bool {
	return func(task ledger.Task) bool {
		switch {
		case n >= 5:
			return task.Status == ledger.StatusSucceeded && task.DeliveryStatus == ledger.DeliveryDelivered
		case n >= 4:
			return task.Status == ledger.StatusSucceeded
		case n >= 2:
			return task.Status == ledger.StatusRunning || task.Status == ledger.StatusSucceeded
		default:
			return true
		}
	}
}

// TestKilledClientsLoseNoAcknowledgedWrite kills each of four workers
// (SIGKILL) at a different point of its load: every step a worker was
// answered for is in the ledger, the transactions the kills cut short left
// nothing behind, and the doctor finds the ledger healthy.
func TestKilledClientsLoseNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	url := pgtest.Database(t)
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "fleet"})
	var workers []*fleetWorker
	killed := make(chan *fleetWorker, 4)
	for i := 0; i < 4; i++ {
		killAt := 17 + 29*i // acknowledged steps, so each dies in a different step of a task
		var once sync.Once
		w := startFleetWorker(t, nil, nil, fleetOrders{URL: url, Schema: "fleet", Name: fmt.Sprintf("k%d", i), Num: i, Tasks: 100, Patience: time.Second},
			func(w *fleetWorker, n int) {
				if n >= killAt {
					once.Do(func() {
						w.cmd.Process.Kill()
						killed <- w
					})
				}
			})
		workers = append(workers, w)
	}
	for range workers {
		w := <-killed
		w.wait(t, true)
	}
	tasks, steps := checkAcknowledged(t, l, workers)
	if steps < 17+46+75+104 {
		t.Errorf("%d acknowledged steps, fewer than the kill points", steps)
	}
	t.Logf("%d tasks, %d acknowledged steps before the kills", tasks, steps)
}

// TestServerKilledMidLoad kills the server (pg_ctl stop -m immediate) while
// three workers write, and starts it again: every acknowledged step is in
// the recovered ledger, the doctor finds it healthy, and each worker's
// *ledger.Ledger carries on after the restart without being opened again.
func TestServerKilledMidLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes and its own server")
	}
	c := pgtest.NewCluster(t)
	url := c.URL("postgres")
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "fleet"})
	var (
		mu        sync.Mutex
		total     int
		perWorker = map[string]int{}
		kill      = make(chan struct{})
		once      sync.Once
	)
	onAck := func(w *fleetWorker, n int) {
		mu.Lock()
		defer mu.Unlock()
		total++
		perWorker[w.name] = n
		// Kill once every worker is under way (its ledger opened) and
		// 150 steps are in.
		if total >= 150 && len(perWorker) == 3 {
			once.Do(func() { close(kill) })
		}
	}
	var workers []*fleetWorker
	for i := 0; i < 3; i++ {
		workers = append(workers, startFleetWorker(t, nil, nil, fleetOrders{URL: url, Schema: "fleet", Name: fmt.Sprintf("s%d", i), Num: i, Tasks: 100, Patience: 20 * time.Second}, onAck))
	}
	<-kill
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, w := range workers {
		w.wait(t, false)
	}
	tasks, steps := checkAcknowledged(t, l, workers)
	sawOutage := 0
	for _, w := range workers {
		if w.fails == 0 {
			continue
		}
		sawOutage++
		if w.ackedAfterFail == 0 {
			t.Errorf("worker %s acknowledged nothing after the outage (its ledger did not connect again)", w.name)
		}
	}
	if sawOutage == 0 {
		t.Error("no worker saw the server go away")
	}
	t.Logf("%d tasks, %d acknowledged steps; %d of 3 workers saw the outage", tasks, steps, sawOutage)
}

// TestConnectionCutMidTransaction terminates the ledger's backend while
// its heartbeat waits, inside its transaction, for a row another session
// holds: the call answers the fixed internal class ("ledger: write
// failed", the CLI's InternalError), the task and its history are as they
// were, and the same *ledger.Ledger answers the next call.
func TestConnectionCutMidTransaction(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, BusyTimeout: time.Minute}, settings{schema: "cut"})
	task, err := l.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if task, err = l.Start(task.ID); err != nil {
		t.Fatal(err)
	}
	events, err := l.History(task.ID)
	if err != nil {
		t.Fatal(err)
	}
	holder := direct(t, url)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM cut.tasks WHERE id = $1 FOR UPDATE`, task.ID); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		_, err := l.Heartbeat(task.ID)
		answered <- err
	}()
	watcher := direct(t, url)
	var pid int
	for deadline := time.Now().Add(time.Minute); ; {
		err := watcher.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`).Scan(&pid)
		if err == nil {
			break
		}
		if !errors.Is(err, pgx.ErrNoRows) || time.Now().After(deadline) {
			t.Fatalf("finding the heartbeat waiting for the row: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := watcher.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	err = <-answered
	if err == nil || err.Error() != "ledger: write failed" || errors.Is(err, ledger.ErrStateConflict) || errors.Is(err, ledger.ErrInvalidInput) || errors.Is(err, ledger.ErrTaskNotFound) {
		t.Fatalf("heartbeat whose connection was cut: %v, want the internal class (ledger: write failed)", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	after, err := l.Get(task.ID)
	if err != nil {
		t.Fatalf("the next call on the same ledger: %v", err)
	}
	if !reflect.DeepEqual(after, task) {
		t.Errorf("task after the cut heartbeat:\n%+v\nwant as it was:\n%+v", after, task)
	}
	if got, err := l.History(task.ID); err != nil || len(got) != len(events) {
		t.Errorf("history after the cut heartbeat: %d events (%v), want %d", len(got), err, len(events))
	}
}
