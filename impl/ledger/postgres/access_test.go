package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// outsiderRole is a role of the test cluster that is not the one the
// ledger connects as.
const outsiderRole = "ledger_outsider"

func makeOutsider(t *testing.T, url string) {
	t.Helper()
	exec(t, url, `DO $$ BEGIN CREATE ROLE `+outsiderRole+`; EXCEPTION WHEN duplicate_object THEN NULL; END $$`)
}

// The refusals of a ledger whose schema another role owns or may reach.
const (
	reasonForeignOwner = "database schema is not owned by the connecting role"
	reasonGranted      = "database schema is granted to another role or PUBLIC"
)

// TestOpenRefusesSharedSchema: the storage boundary's counterpart on a
// server. A ledger whose schema, or anything in it, another role owns, or
// on which anything is granted to another role or to PUBLIC (a table, a
// column, the events' sequence, the schema itself), is refused when it is
// opened, writable and read-only alike, as InvalidInput with a fixed
// reason, as the SQLite engine refuses a file others can reach; the
// acknowledgement of external ACLs (a Windows file's) changes nothing
// here. A revoke or a change of owner back makes it open again.
func TestOpenRefusesSharedSchema(t *testing.T) {
	url := pgtest.Database(t)
	makeOutsider(t, url)
	ctx := context.Background()
	cases := []struct {
		name, damage, undo, reason string
	}{
		{"the schema owned by another role", `ALTER SCHEMA %s OWNER TO ` + outsiderRole, `ALTER SCHEMA %s OWNER TO CURRENT_USER`, reasonForeignOwner},
		{"a table owned by another role", `ALTER TABLE %s.task_events OWNER TO ` + outsiderRole, `ALTER TABLE %s.task_events OWNER TO CURRENT_USER`, reasonForeignOwner},
		{"a table readable by PUBLIC", `GRANT SELECT ON %s.tasks TO PUBLIC`, `REVOKE ALL ON %s.tasks FROM PUBLIC`, reasonGranted},
		{"a table writable by another role", `GRANT INSERT, UPDATE, DELETE ON %s.tasks TO ` + outsiderRole, `REVOKE ALL ON %s.tasks FROM ` + outsiderRole, reasonGranted},
		{"a table truncated by another role", `GRANT TRUNCATE ON %s.task_events TO ` + outsiderRole, `REVOKE ALL ON %s.task_events FROM ` + outsiderRole, reasonGranted},
		{"a table readable by another role", `GRANT SELECT ON %s.schema_meta TO ` + outsiderRole, `REVOKE ALL ON %s.schema_meta FROM ` + outsiderRole, reasonGranted},
		{"a column writable by another role", `GRANT UPDATE (status) ON %s.tasks TO ` + outsiderRole, `REVOKE ALL (status) ON %s.tasks FROM ` + outsiderRole, reasonGranted},
		{"the events' numbering usable by PUBLIC", `GRANT USAGE, UPDATE ON SEQUENCE %s.task_events_sequence_seq TO PUBLIC`, `REVOKE ALL ON SEQUENCE %s.task_events_sequence_seq FROM PUBLIC`, reasonGranted},
		{"the schema open to PUBLIC", `GRANT USAGE, CREATE ON SCHEMA %s TO PUBLIC`, `REVOKE ALL ON SCHEMA %s FROM PUBLIC`, reasonGranted},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			schema := fmt.Sprintf("shared_%d", i)
			l := openForTest(t, url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: schema})
			task, err := l.Create(ledger.CreateParams{})
			if err != nil {
				t.Fatal(err)
			}
			l.Close()
			quoted := pgx.Identifier{schema}.Sanitize()
			exec(t, url, fmt.Sprintf(tc.damage, quoted))
			for _, opts := range []ledger.Options{{}, {ReadOnly: true}, {MustExist: true}, {AllowExternalACL: true}, {AllowExternalACL: true, ReadOnly: true}} {
				l, err := open(ctx, url, opts, settings{schema: schema})
				if err == nil {
					l.Close()
				}
				if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != tc.reason {
					t.Fatalf("open %+v after %s: %v, want InvalidInput %q", opts, tc.name, err, tc.reason)
				}
			}
			exec(t, url, fmt.Sprintf(tc.undo, quoted))
			l = openForTest(t, url, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true}, settings{schema: schema})
			if _, err := l.Get(task.ID); err != nil {
				t.Fatalf("get after the damage was undone: %v", err)
			}
			rep, err := l.Doctor()
			if err != nil || !rep.Healthy {
				t.Fatalf("doctor after the damage was undone: %s, %v", reportJSON(t, rep), err)
			}
		})
	}
}

// TestInitRefusesGrantsMadeByDefault: default privileges that grant the
// tables to another role as they are made are found by the same open
// that made them: it is refused, and nothing is left made.
func TestInitRefusesGrantsMadeByDefault(t *testing.T) {
	url := pgtest.Database(t)
	makeOutsider(t, url)
	exec(t, url, `ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO `+outsiderRole)
	t.Cleanup(func() {
		exec(t, url, `ALTER DEFAULT PRIVILEGES REVOKE SELECT ON TABLES FROM `+outsiderRole)
	})
	_, err := open(context.Background(), url, ledger.Options{AllowExternalACL: onWindows}, settings{schema: "by_default"})
	if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != reasonGranted {
		t.Fatalf("open under default grants: %v, want InvalidInput %q", err, reasonGranted)
	}
	var n int
	if err := direct(t, url).QueryRow(context.Background(), `SELECT count(*) FROM pg_namespace WHERE nspname = 'by_default'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the refused open left its schema made (%d, %v)", n, err)
	}
}
