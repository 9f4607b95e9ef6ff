package ledgerdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/dbdigest"
	"github.com/stateguard/stateguard/fuzz/internal/memdir"
	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/testfixtures"
)

// walTasks are the tasks the seed -wal commits over small-v2.
var walTasks = []string{"7a5c00f1-0000-4000-8000-000000000001", "7a5c00f1-0000-4000-8000-000000000002"}

// FuzzReadOnlyWAL puts fuzzed bytes beside the reference's small-v2 ledger
// as its -wal (seeded with a real -wal that commits two creates and a
// start) and opens it read-only: the -wal is the input the read-only path
// parses by SQLite's recovery rules. Nothing may panic; the files must be
// left as they were with no file made; the read-only open must succeed
// exactly when a writer's open of a copy succeeds, and then the doctor's
// report, a dry run and get must answer what the writer answers.
func FuzzReadOnlyWAL(f *testing.F) {
	base, wal := seedWAL(f)
	f.Add(wal)
	f.Add([]byte{})
	f.Add(wal[:32])
	f.Add(wal[:len(wal)-100])
	f.Add(wal[:len(wal)/2])
	writers := map[[sha256.Size]byte]writerAnswers{}
	f.Fuzz(func(t *testing.T, walBytes []byte) {
		dir, db := layOut(t, base, walBytes)
		r, err := ledger.Open(db, ledger.Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: func() time.Time { return time.Unix(1e9, 0) }})
		var got string
		if err == nil {
			got = answers(r)
			checkErr(t, "close", r.Close(), dir)
		} else if !errors.Is(err, ledger.ErrStateConflict) && !errors.Is(err, ledger.ErrInvalidInput) {
			t.Fatalf("open refused without a class: %v", err)
		}
		checkErr(t, "open", err, dir)
		for suffix, want := range map[string][]byte{"": base, "-wal": walBytes} {
			after, rerr := os.ReadFile(db + suffix)
			if rerr != nil || !bytes.Equal(after, want) {
				t.Fatalf("a read-only open changed %q", suffix)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Fatalf("read-only open left %d files", len(entries))
		}

		_, copyDB := layOut(t, base, walBytes)
		w, werr := ledger.Open(copyDB, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(1e9, 0) }})
		if (err == nil) != (werr == nil) {
			t.Fatalf("read-only open: %v; writer's open: %v", err, werr)
		}
		if werr != nil {
			return
		}
		// The writer's answers are a function of the database it
		// recovered alone: many -wal inputs recover the same (a damaged
		// frame ends the log where it is), and for those the answers
		// another input got from the writer stand in. The same input
		// again asks the writer, so that its coverage is the same as the
		// first time (the toolchain runs an input that found new coverage
		// once more before it keeps it).
		key := recoveredDigest(t, copyDB)
		want, seen := writers[key]
		if input := sha256.Sum256(walBytes); !seen || want.input == input {
			want = writerAnswers{input, answers(w)}
		}
		w.Close()
		if got != want.text {
			t.Fatalf("read-only answers\n%s\nwriter's answers (from this input: %v)\n%s", got, !seen, want.text)
		}
		if !seen {
			if len(writers) >= 1<<14 {
				clear(writers)
			}
			writers[key] = want
		}
	})
}

// writerAnswers are a writer's answers and a digest of the input that
// got them (a -wal input can be large; the memo keeps 16,384 of them).
type writerAnswers struct {
	input [sha256.Size]byte
	text  string
}

// recoveredDigest is a digest of the database an open writer recovered at
// path, as a second SQLite connection reads it (SQLite's serialization: its
// pages, the committed frames of the -wal included; a copy of the file
// would drop SQLite's POSIX locks).
func recoveredDigest(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	// '#', '?' and '%' escaped: a t.TempDir() is named after the sub-test
	// (seed#N) where no memory directory is offered.
	r := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")
	db, err := sql.Open("sqlite", "file:"+r.Replace(filepath.ToSlash(path))+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	key, err := dbdigest.Of(conn)
	if err != nil {
		t.Fatalf("serialize the writer's database: %v", err)
	}
	return key
}

// layOut writes the database and the -wal into a fresh private directory.
func layOut(t *testing.T, db, wal []byte) (dir, path string) {
	t.Helper()
	dir = filepath.Join(memdir.TempDir(t), "ledger")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "tasks.sqlite")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// answers is the doctor's report, a dry run and get of the seed's tasks.
func answers(l *ledger.Ledger) string {
	var b bytes.Buffer
	rep, err := l.Doctor()
	js, _ := json.Marshal(rep)
	fmt.Fprintf(&b, "doctor %s %v\n", js, err)
	rr, err := l.Reconcile(ledger.ReconcileOptions{DryRun: true})
	js, _ = json.Marshal(rr)
	fmt.Fprintf(&b, "dry run %s %v\n", js, err)
	for _, id := range walTasks {
		task, err := l.Get(id)
		js, _ = json.Marshal(task)
		fmt.Fprintf(&b, "get %s %v\n", js, err)
	}
	return b.String()
}

// seedWAL writes two creates and a start over a copy of small-v2 and
// returns the database and -wal bytes a killed writer would leave (a
// second connection keeps the writer's close from checkpointing).
func seedWAL(f *testing.F) (db, wal []byte) {
	fixture, err := os.ReadFile(filepath.Join(testfixtures.Dir(f, "ledger"), "small-v2.sqlite"))
	if err != nil {
		f.Fatal(err)
	}
	dir := filepath.Join(f.TempDir(), "seed")
	if err := os.Mkdir(dir, 0o700); err != nil {
		f.Fatal(err)
	}
	p := filepath.Join(dir, "tasks.sqlite")
	if err := os.WriteFile(p, fixture, 0o600); err != nil {
		f.Fatal(err)
	}
	keeper, err := sql.Open("sqlite", "file:"+p+"?mode=rw")
	if err != nil {
		f.Fatal(err)
	}
	defer keeper.Close()
	keeper.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA wal_autocheckpoint = 0", "SELECT count(*) FROM tasks"} {
		if _, err := keeper.Exec(q); err != nil {
			f.Fatal(err)
		}
	}
	w, err := ledger.Open(p, ledger.Options{AllowExternalACL: onWindows, Clock: func() time.Time { return time.Unix(1.7e9, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	for _, id := range walTasks {
		if _, err := w.Create(ledger.CreateParams{TaskID: id}); err != nil {
			f.Fatal(err)
		}
	}
	if _, err := w.Start(walTasks[0]); err != nil {
		f.Fatal(err)
	}
	w.Close()
	if db, err = os.ReadFile(p); err != nil {
		f.Fatal(err)
	}
	if wal, err = os.ReadFile(p + "-wal"); err != nil || len(wal) == 0 {
		f.Fatalf("no -wal: %v", err)
	}
	return db, wal
}
