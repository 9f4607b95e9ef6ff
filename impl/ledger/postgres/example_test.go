package postgres_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/postgres"
)

// Open a ledger that several hosts share. The URL carries no password:
// it comes from the password file (~/.pgpass or PGPASSFILE), a service
// file (PGSERVICE) or PGPASSWORD, as libpq reads them. Across hosts, ask
// for TLS with the server's certificate checked (sslmode=verify-full).
// The *ledger.Ledger is the same as a file's: only the constructor
// differs.
func ExampleOpen() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := postgres.Open(ctx, "postgres://worker@db.example.com/jobs?sslmode=verify-full", postgres.Options{
		Schema:      "task_state_guard", // the default, written out
		BusyTimeout: 2 * time.Second,
	})
	if err != nil {
		// The error names no host, user or database; ledger.Reason says
		// why in a fixed phrase.
		fmt.Fprintln(os.Stderr, "open:", ledger.Reason(err))
		return
	}
	defer l.Close()
	task, err := l.Create(ledger.CreateParams{Timeout: new(15 * time.Minute)})
	if err != nil {
		fmt.Fprintln(os.Stderr, "create:", ledger.Reason(err))
		return
	}
	if _, err := l.Start(task.ID); err != nil {
		fmt.Fprintln(os.Stderr, "start:", ledger.Reason(err))
	}
}
