package sweepstate_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/stateguard/stateguard/impl/sweepstate"
)

// One sweep: take the lease, record an item, move the source's cursor past
// it, validate, record the run and release the lease. Each call is one
// load, one decision and at most one durable write of the state file.
func Example() {
	dir, err := os.MkdirTemp("", "sweep-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	state := filepath.Join(dir, "sweep.yml")

	// Commands carry their own time; the clock is only read when Now is "".
	eng := &sweepstate.Engine{Clock: func() time.Time { return time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC) }}
	run := func(cmd sweepstate.Command) sweepstate.Result {
		res := eng.Run(state, cmd)
		fmt.Printf("%T: %s\n", cmd, res.Word)
		return res
	}

	run(sweepstate.LeaseAcquire{Writer: "nightly", Now: "2026-07-02T12:00:00Z"})
	run(sweepstate.LeaseAcquire{Writer: "other", Now: "2026-07-02T12:00:30Z"}) // held by nightly
	run(sweepstate.UpsertItem{Source: "chat", ID: "1719922800.001", Writer: "nightly",
		JSON: `{"status": "ingested", "title": "Build fails on main"}`, Now: "2026-07-02T12:01:00Z"})
	run(sweepstate.CursorAdvance{Source: "chat", To: "1719922800.001", PastItem: "1719922800.001",
		Writer: "nightly", Now: "2026-07-02T12:02:00Z"})
	res := run(sweepstate.CursorGet{Source: "chat"})
	cursor, _ := res.Payload.Get("cursor")
	fmt.Println("cursor:", cursor)
	run(sweepstate.Validate{})
	run(sweepstate.RunRecord{Writer: "nightly", Outcome: "completed", Counts: `{"ingested": 1}`,
		Timestamp: "2026-07-02T12:03:00Z"})
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
	// cursor: 1719922800.001
	// sweepstate.Validate: OK
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
	//   timestamp: "2026-07-02T12:03:00Z"
	//   outcome: "completed"
	//   writer: "nightly"
	//   counts:
	//     ingested: 1
}
