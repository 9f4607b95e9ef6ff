package ledger_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/postgres"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// The laws (reconcile_laws_test.go, prune_laws_test.go) run on both
// engines: a ledger in a file, and a ledger on PostgreSQL in a throwaway
// cluster (internal/testsupport/pgtest; skipped where none can be made,
// failed under CI). On the server one schema serves a whole run, emptied
// before each case, and one writable and one read-only ledger stay open
// across its cases: a connection and the schema's check at open cost a
// third of a second on a loaded machine, more than a case's operations.

// lawServer is the schema a run of laws on PostgreSQL uses, the test's
// own connection to it (which empties it and reads its rows), and the
// run's two ledgers, which read the clock and ids of the case's world.
type lawServer struct {
	url     string
	schema  string
	conn    *pgx.Conn
	rw, ro  *ledger.Ledger
	current *world
}

// engineRun is one engine a law runs on; server is nil for SQLite.
type engineRun struct {
	name   string
	server *lawServer
	t      *testing.T
}

// forEachEngine runs law as a subtest per engine.
func forEachEngine(t *testing.T, law func(t *testing.T, e *engineRun)) {
	t.Run("sqlite", func(t *testing.T) { law(t, &engineRun{name: "sqlite", t: t}) })
	t.Run("postgres", func(t *testing.T) { law(t, serverRun(t)) })
}

// serverRun is a run on PostgreSQL: a fresh database of pgtest's cluster
// with the ledger's schema made, its two ledgers, and the test's own
// connection to it.
func serverRun(t *testing.T) *engineRun {
	url := pgtest.Database(t)
	ctx := context.Background()
	s := &lawServer{url: url, schema: "laws"}
	clock := func() float64 { return s.current.clock.now }
	newID := func() (string, error) {
		s.current.newIDs++
		n := s.current.newIDs
		return fmt.Sprintf("0000%04x-0000-4000-8000-%012x", n, n), nil
	}
	var err error
	// The writable one first: it makes the schema.
	for _, readOnly := range []bool{false, true} {
		opts := postgres.Options{Schema: s.schema, ReadOnly: readOnly, NewID: newID}
		opts.SetFixedClockSeconds(clock)
		l, err := postgres.Open(ctx, url, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if readOnly {
			s.ro = l
		} else {
			s.rw = l
		}
	}
	s.conn, err = pgx.Connect(ctx, url+"&search_path="+s.schema)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.conn.Close(context.Background()) })
	return &engineRun{name: "postgres", server: s, t: t}
}

// newWorld is an empty ledger for one case: a file in a fresh directory,
// or the run's schema emptied.
func (e *engineRun) newWorld() (*world, error) {
	w := &world{clock: &scriptedClock{now: 1.7e9}, server: e.server}
	if e.server == nil {
		w.dir = e.t.TempDir()
		w.path = filepath.Join(w.dir, "ledger.sqlite")
		return w, nil
	}
	e.server.current = w
	_, err := e.server.conn.Exec(context.Background(), `TRUNCATE task_events, tasks RESTART IDENTITY`)
	return w, err
}

// open opens the world's ledger reading its clock; on the server it is
// one of the run's two ledgers.
func (w *world) open(readOnly bool) (*ledger.Ledger, error) {
	if w.server != nil {
		if readOnly {
			return w.server.ro, nil
		}
		return w.server.rw, nil
	}
	n := len(w.ids)
	return ledger.Open(w.path, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows, ReadOnly: readOnly, NewID: func() (string, error) {
		n++
		return fmt.Sprintf("0000%04x-0000-4000-8000-%012x", n, n), nil
	}}, w.clock.read))
}

// close closes a ledger open gave; the server's stay open for the run.
func (w *world) close(l *ledger.Ledger) error {
	if w.server != nil {
		return nil
	}
	return l.Close()
}

// seal records what a dry run must leave as it was. For a file whose
// ledger is closed: its bytes, mode and time and the directory's names;
// beside an open writable ledger (open true): the file and its WAL, whose
// -shm index may record reader marks. On the server: every row of both
// tables with the transaction that last wrote it (xmin: a row rewritten
// with its own values changes it), and the events' numbering.
func (w *world) seal(open bool) (string, error) {
	if w.server != nil {
		return w.server.rows()
	}
	var out bytes.Buffer
	files := []string{w.path}
	if open {
		files = append(files, w.path+"-wal")
	}
	for _, name := range files {
		st, err := stateOf(name)
		if err != nil && !(open && os.IsNotExist(err)) {
			return "", err
		}
		fmt.Fprintf(&out, "%s %x %v %v\n", filepath.Base(name), sha256.Sum256(st.data), st.mode, st.mtime)
	}
	if !open {
		out.WriteString(dirNames(w.dir))
	}
	return out.String(), nil
}

// rows is the schema's rows as text, each with its xmin, and the events'
// identity's last value.
func (s *lawServer) rows() (string, error) {
	var out string
	err := s.conn.QueryRow(context.Background(), `SELECT
		coalesce((SELECT string_agg(format('%s %s', t.xmin, t), E'\n' ORDER BY t.id COLLATE "C") FROM tasks t), '') || E'\n' ||
		coalesce((SELECT string_agg(format('%s %s', e.xmin, e), E'\n' ORDER BY e.sequence) FROM task_events e), '') || E'\n' ||
		coalesce(pg_sequence_last_value(pg_get_serial_sequence('task_events', 'sequence')::regclass)::text, 'unused')`).Scan(&out)
	return out, err
}
