package ledger

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// TestReadOnlyPageSizes: a ledger made in a file of the smallest (512) or
// the largest (65536, stored as 1 in the header) page size SQLite allows
// reads like any other through the read-only view.
func TestReadOnlyPageSizes(t *testing.T) {
	for _, size := range []int{512, 65536} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			p := filepath.Join(privateDir(t), "ledger.sqlite")
			db, err := sql.Open("sqlite", "file:"+p+"?mode=rwc")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			for _, q := range []string{fmt.Sprintf("PRAGMA page_size = %d", size), "PRAGMA journal_mode = WAL"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			db.Close()
			w, err := Open(p, Options{AllowExternalACL: onWindows, Clock: fixedClock(1000)})
			if err != nil {
				t.Fatal(err)
			}
			task, err := w.Create(CreateParams{})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := w.pragmaInt("PRAGMA page_size"); err != nil || got != size {
				t.Fatalf("page size %d %v, want %d", got, err, size)
			}
			w.Close()
			r, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only open: %v", err)
			}
			defer r.Close()
			if rep, err := r.Doctor(); err != nil || !rep.Healthy || rep.TaskCount != 1 {
				t.Fatalf("doctor: %+v %v", rep, err)
			}
			if got, err := r.Get(task.ID); err != nil || got.ID != task.ID {
				t.Fatalf("get: %+v %v", got, err)
			}
		})
	}
}
