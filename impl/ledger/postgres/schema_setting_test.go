package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// schemaNames lists the schemas of the database, the server's own left
// out.
func schemaNames(t *testing.T, dbURL string) []string {
	t.Helper()
	rows, err := direct(t, dbURL).Query(context.Background(), `SELECT nspname FROM pg_namespace
		WHERE nspname NOT LIKE 'pg\_%' AND nspname NOT IN ('public', 'information_schema') ORDER BY nspname`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestSchemaFromTheSession: with Options.Schema empty (the command line
// always), the ledger's schema is the session's setting
// task_state_guard.schema when the server has one for it, however it was
// set: a URL parameter (which pgx sends as a setting), libpq's options
// in the URL or in PGOPTIONS, or the role's own setting on the server.
// Without one it is DefaultSchema. Options.Schema, when given, wins. A
// setting longer than a schema name may be is refused as Options.Schema
// is, and nothing is made.
func TestSchemaFromTheSession(t *testing.T) {
	base := pgtest.Database(t)
	ctx := context.Background()
	create := func(dbURL string, s settings) {
		t.Helper()
		l, err := open(ctx, dbURL, ledger.Options{AllowExternalACL: onWindows}, s)
		if err != nil {
			t.Fatalf("open: %v (%v)", err, errors.Unwrap(err))
		}
		if _, err := l.Create(ledger.CreateParams{}); err != nil {
			t.Fatal(err)
		}
		l.Close()
	}
	create(base+"&"+SchemaSetting+"=by_parameter", settings{})
	create(base+"&options=-c%20"+SchemaSetting+"%3Dby_options", settings{})
	t.Setenv("PGOPTIONS", "-c "+SchemaSetting+"=by_environment")
	create(base, settings{})
	create(base, settings{schema: "given_in_go"})
	t.Setenv("PGOPTIONS", "")
	exec(t, base, `ALTER ROLE CURRENT_USER IN DATABASE `+strings.TrimPrefix(strings.SplitN(base, "?", 2)[0], "postgres:///")+` SET `+SchemaSetting+` = 'by_role'`)
	create(base, settings{})
	want := []string{"by_environment", "by_options", "by_parameter", "by_role", "given_in_go"}
	if got := schemaNames(t, base); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("schemas made %q, want %q", got, want)
	}
	_, err := open(ctx, base+"&"+SchemaSetting+"="+strings.Repeat("s", 64), ledger.Options{AllowExternalACL: onWindows}, settings{})
	if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != "schema name must be 1 to 63 bytes without NUL" {
		t.Fatalf("a schema setting of 64 bytes: %v, want InvalidInput", err)
	}
	if got := schemaNames(t, base); len(got) != len(want) {
		t.Fatalf("the refused open made a schema: %q", got)
	}
}
