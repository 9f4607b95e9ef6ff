package sweepstate_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
)

// One sweep: take the lease, record an item, move the source's cursor past
// it, read the cursor back, validate, record the run and release the
// lease. Each call is one load, one decision and at most one durable write
// of the state file.
func Example() {
	dir, err := os.MkdirTemp("", "sweep-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "sweep.yml")

	// Commands carry their own time; the clock is only read when Now is
	// zero.
	at := func(minute int) time.Time { return time.Date(2026, 7, 2, 12, minute, 0, 0, time.UTC) }
	eng := &sweepstate.Engine{Clock: func() time.Time { return at(0) }}
	run := func(cmd sweepstate.Command) sweepstate.Result {
		res := eng.Run(state, cmd)
		fmt.Printf("%T: %s\n", cmd, res.Word)
		return res
	}

	run(sweepstate.LeaseAcquire{Writer: "nightly", TTLMinutes: 30, Now: at(0)})
	run(sweepstate.LeaseAcquire{Writer: "other", Now: at(1)}) // held by nightly
	type item struct {
		Status string `json:"status"`
		Title  string `json:"title"`
	}
	run(sweepstate.UpsertItem{Source: "chat", ID: "1719922800.001", Writer: "nightly",
		Fields: item{Status: "ingested", Title: "Build fails on main"}, Now: at(1)})
	run(sweepstate.CursorAdvance{Source: "chat", To: "1719922800.001", PastItem: "1719922800.001",
		Writer: "nightly", Now: at(2)})
	cursor, ok := run(sweepstate.CursorGet{Source: "chat"}).Cursor()
	fmt.Println("cursor:", cursor, ok)
	fmt.Println("downgraded:", run(sweepstate.Validate{}).Downgraded())
	run(sweepstate.RunRecord{Writer: "nightly", Outcome: sweepstate.OutcomeCompleted,
		Counts: map[string]int{"ingested": 1}, Timestamp: at(3)})
	run(sweepstate.LeaseRelease{Writer: "nightly"})

	text, err := os.ReadFile(state)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(string(text))
	// Output:
	// sweepstate.LeaseAcquire: OK
	// sweepstate.LeaseAcquire: LOCKED
	// sweepstate.UpsertItem: OK
	// sweepstate.CursorAdvance: OK
	// sweepstate.CursorGet: OK
	// cursor: 1719922800.001 true
	// sweepstate.Validate: OK
	// downgraded: []
	// sweepstate.RunRecord: OK
	// sweepstate.LeaseRelease: OK
	// schema_version: 1
	// sources:
	//   chat:
	//     cursor: "1719922800.001"
	// items:
	//   "chat:1719922800.001":
	//     source: "chat"
	//     status: "ingested"
	//     title: "Build fails on main"
	//     id: "1719922800.001"
	// last_run:
	//   timestamp: "2026-07-02T12:03:00+00:00"
	//   outcome: "completed"
	//   writer: "nightly"
	//   counts:
	//     ingested: 1
}

// Numbers stay exact through the typed API when the caller keeps them as
// text: json.Number in, json.Number out (UseNumber), so an integer beyond
// 64 bits keeps every digit and a float keeps its text ("1.0" stays a
// float; a float64 1.0 would be written 1, an integer). A json.RawMessage
// keeps the payload's bytes, keys in the file's order (an item's known
// fields first, the rest sorted).
func ExampleResult_Decode() {
	dir, err := os.MkdirTemp("", "sweep-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "sweep.yml")
	now := time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)
	eng := &sweepstate.Engine{}

	eng.Run(state, sweepstate.LeaseAcquire{Writer: "w", Now: now})
	eng.Run(state, sweepstate.UpsertItem{Source: "gh", ID: "7", Writer: "w", Now: now,
		Fields: json.RawMessage(`{"title": "Flaky test", "size": 1180591620717411303424, "ratio": 1.0}`)})

	var doc struct {
		Lease struct {
			Writer     string `json:"writer"`
			Timestamp  string `json:"timestamp"`
			TTLMinutes int    `json:"ttl_minutes"`
		} `json:"lease"`
		Items map[string]map[string]any `json:"items"`
	}
	res := eng.Run(state, sweepstate.Read{})
	if err := res.Decode(&doc); err != nil {
		log.Fatal(err)
	}
	fmt.Println(doc.Lease.Writer, doc.Lease.Timestamp, doc.Lease.TTLMinutes)
	item := doc.Items["gh:7"]
	fmt.Printf("%T %v\n", item["size"], item["size"])
	fmt.Printf("%T %v\n", item["ratio"], item["ratio"])

	var raw struct {
		Items map[string]json.RawMessage `json:"items"`
	}
	if err := res.Decode(&raw); err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(raw.Items["gh:7"]))
	// Output:
	// w 2026-07-02T12:00:00+00:00 60
	// json.Number 1180591620717411303424
	// json.Number 1.0
	// {"source": "gh", "title": "Flaky test", "id": "7", "ratio": 1.0, "size": 1180591620717411303424}
}

// An answer of ERROR always carries an Err to match with errors.Is: here
// the state file's directory cannot be made, because a regular file stands
// where it would be.
func ExampleResult_ioFailure() {
	dir, err := os.MkdirTemp("", "sweep-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	blocker := filepath.Join(dir, "not-a-directory")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		log.Fatal(err)
	}
	res := (&sweepstate.Engine{}).Run(filepath.Join(blocker, "sweep.yml"),
		sweepstate.LeaseAcquire{Writer: "w", Now: time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)})
	fmt.Println(res.Word, errors.Is(res.Err, sweepstate.ErrIO))
	fmt.Println(res.Reason)
	// Output:
	// ERROR true
	// cannot create the state file's parent directory
}
