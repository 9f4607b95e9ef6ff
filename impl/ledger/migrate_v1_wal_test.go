package ledger

import (
	"bytes"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// walCrashCopy copies fixture into a private directory, commits stmts there
// while a second connection keeps the writer's close from checkpointing,
// and returns the database and -wal bytes as a killed writer leaves them.
func walCrashCopy(t *testing.T, fixture string, stmts ...string) (db, wal, shm []byte) {
	t.Helper()
	p := copyFixture(t, fixture)
	keeper, err := sql.Open("sqlite", "file:"+p+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	defer keeper.Close()
	keeper.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA wal_autocheckpoint = 0", "SELECT count(*) FROM sqlite_master"} {
		if _, err := keeper.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	w, err := sql.Open("sqlite", "file:"+p+"?mode=rw")
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	for _, q := range append([]string{"PRAGMA wal_autocheckpoint = 0"}, stmts...) {
		if _, err := w.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	w.Close()
	if db, err = os.ReadFile(p); err != nil {
		t.Fatal(err)
	}
	if wal, err = os.ReadFile(p + "-wal"); err != nil || len(wal) == 0 {
		t.Fatalf("no committed frames in the -wal: %v", err)
	}
	if shm, err = os.ReadFile(p + "-shm"); err != nil {
		t.Fatal(err)
	}
	return db, wal, shm
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestV1RefusalWithWALLeavesFilesUnchanged: a file a writable open refuses
// (unsafe v1, or a schema that is neither v1 nor v2) whose -wal holds
// committed frames, as a killed v1 writer leaves it, is refused with the
// database and its -wal byte for byte as they were and no file added or
// removed. The refusal is decided on what the -wal holds: a safe v1 file
// made unsafe by a committed frame is refused too.
func TestV1RefusalWithWALLeavesFilesUnchanged(t *testing.T) {
	requireFixtures(t)
	cases := []struct {
		name    string
		fixture string
		stmts   []string
		empty   bool // keep the -wal, but empty (a writer killed before its first commit)
		shm     bool // leave the killed writer's -shm too
	}{
		{"v1-unsafe", "v1-unsafe.sqlite", []string{"PRAGMA user_version = 7"}, false, false},
		{"v1-safe made unsafe in the -wal", "v1-safe.sqlite", []string{
			`UPDATE tasks SET terminal_code = 'Worker crashed (OOM)' WHERE id = '7a5c0008-0000-4000-8000-000000000008'`}, false, false},
		{"broken-fingerprint", "broken-fingerprint.sqlite", []string{"PRAGMA user_version = 7"}, false, false},
		{"v1-unsafe, empty -wal", "v1-unsafe.sqlite", []string{"PRAGMA user_version = 7"}, true, false},
		{"v1-unsafe, -wal and -shm", "v1-unsafe.sqlite", []string{"PRAGMA user_version = 7"}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db, wal, shm := walCrashCopy(t, c.fixture, c.stmts...)
			if c.empty {
				db, _ = os.ReadFile(filepath.Join(fixtureDir, c.fixture))
				wal = []byte{}
			}
			dir := privateDir(t)
			p := filepath.Join(dir, "tasks.sqlite")
			if err := os.WriteFile(p, db, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p+"-wal", wal, 0o600); err != nil {
				t.Fatal(err)
			}
			if c.shm {
				if err := os.WriteFile(p+"-shm", shm, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := dirNames(t, dir)
			l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
			if err == nil {
				l.Close()
			}
			if !errors.Is(err, ErrStateConflict) {
				t.Fatalf("writable open: %v, want StateConflict", err)
			}
			if got, _ := os.ReadFile(p); !bytes.Equal(got, db) {
				t.Errorf("refused database file changed")
			}
			if got, err := os.ReadFile(p + "-wal"); err != nil || !bytes.Equal(got, wal) {
				t.Errorf("refused file's -wal changed or vanished: %v", err)
			}
			if after := dirNames(t, dir); !slices.Equal(after, before) {
				t.Errorf("directory %v, want %v", after, before)
			}
		})
	}
}

// TestV1MigratesWhenItsWALMakesItSafe: the refusal is read through the
// -wal, so a v1 file whose committed frames replace its legacy text with
// registry codes migrates on a writable open.
func TestV1MigratesWhenItsWALMakesItSafe(t *testing.T) {
	requireFixtures(t)
	db, wal, _ := walCrashCopy(t, "v1-unsafe.sqlite",
		`UPDATE tasks SET terminal_code = 'worker_failed' WHERE id = '7a5c0008-0000-4000-8000-000000000008'`,
		`UPDATE task_events SET code = 'worker_failed' WHERE task_id = '7a5c0008-0000-4000-8000-000000000008' AND code = 'Worker crashed (OOM)'`)
	p := filepath.Join(privateDir(t), "tasks.sqlite")
	if err := os.WriteFile(p, db, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1e9)})
	if err != nil {
		t.Fatalf("writable open: %v", err)
	}
	defer l.Close()
	if v := l.SchemaVersion(); v != 2 {
		t.Fatalf("schema version %d after open, want 2", v)
	}
}
