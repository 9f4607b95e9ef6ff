package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/postgres"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

func schemaExists(t *testing.T, url, schema string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_namespace WHERE nspname = $1`, schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// TestOpenHonoursItsOptions: the exported constructor makes the ledger in
// DefaultSchema unless told another, refuses a missing schema when
// MustExist or ReadOnly asks it to (as a missing file: InvalidInput,
// "database does not exist") and makes nothing then, refuses a schema name
// the server would cut short, and the fixed clock is the time it writes.
func TestOpenHonoursItsOptions(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	for _, opts := range []postgres.Options{{MustExist: true}, {ReadOnly: true}, {ReadOnly: true, Schema: "other"}} {
		_, err := postgres.Open(ctx, url, opts)
		if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != "database does not exist" {
			t.Fatalf("open %+v of an empty database: %v, want InvalidInput 'database does not exist'", opts, err)
		}
	}
	if schemaExists(t, url, postgres.DefaultSchema) || schemaExists(t, url, "other") {
		t.Fatal("a refused open made a schema")
	}
	// pgx's message for a URL it cannot read quotes the URL: the error
	// is a fixed phrase instead.
	for _, bad := range []string{"postgres://[db.internal/jobs", "postgres://db.internal:port/jobs", "postgres:///jobs?a"} {
		_, err := postgres.Open(ctx, bad, postgres.Options{})
		if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != "database URL or connection settings are not valid" {
			t.Fatalf("open of a URL pgx cannot read: %v, want InvalidInput 'database URL or connection settings are not valid'", err)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if strings.Contains(e.Error(), "jobs") || strings.Contains(e.Error(), "db.internal") {
				t.Fatalf("the error %q names the URL", e)
			}
		}
	}
	for _, bad := range []string{strings.Repeat("s", 64), "a\x00b"} {
		if _, err := postgres.Open(ctx, url, postgres.Options{Schema: bad}); !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != "schema name must be 1 to 63 bytes without NUL" {
			t.Fatalf("open with a schema name of %d bytes: %v, want InvalidInput", len(bad), err)
		}
	}
	now := time.Unix(1767225600, 500_000_000)
	l, err := postgres.Open(ctx, url, postgres.Options{FixedClock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	task, err := l.Create(ledger.CreateParams{})
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if !task.CreatedAt.Equal(now) {
		t.Fatalf("created at %v, want the fixed clock's %v", task.CreatedAt, now)
	}
	if !schemaExists(t, url, postgres.DefaultSchema) {
		t.Fatalf("no schema %q after a create", postgres.DefaultSchema)
	}
	named, err := postgres.Open(ctx, url, postgres.Options{Schema: strings.Repeat("s", 63), MustExist: false})
	if err != nil {
		t.Fatal(err)
	}
	named.Close()
	// The task is in the default schema and nowhere else.
	for schema, want := range map[string]bool{"": true, strings.Repeat("s", 63): false} {
		r, err := postgres.Open(ctx, url, postgres.Options{Schema: schema, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.Get(task.ID)
		r.Close()
		if (err == nil) != want {
			t.Fatalf("get in schema %q: %v, want found %v", schema, err, want)
		}
	}
}
