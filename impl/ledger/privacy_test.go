package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsNeverEchoInputs: every error message is free of the id, code,
// hash and path it was given.
func TestErrorsNeverEchoInputs(t *testing.T) {
	l, _, p := openTest(t)
	secretID := "5ec2e7aa-0000-4000-8000-00000000beef"
	secretCode := "secret_code_value"
	var errs []error
	_, err := l.Get(secretID)
	errs = append(errs, err)
	_, err = l.Get("sEcReT-not-an-id")
	errs = append(errs, err)
	_, err = l.CloseTask(secretID, StatusSucceeded, Code(secretCode))
	errs = append(errs, err)
	task, _ := l.Create(CreateParams{})
	l.CloseTask(task.ID, StatusFailed, "")
	_, err = l.SetDelivery(task.ID, DeliveryFailed, Code(secretCode))
	errs = append(errs, err)
	_, err = l.Create(CreateParams{PayloadHash: "SECRETHASH", Internal: true})
	errs = append(errs, err)
	_, err = Open(filepath.Join(filepath.Dir(p), "secretdir", "x")+"\x00", Options{AllowExternalACL: onWindows})
	errs = append(errs, err)
	_, err = Open(filepath.Join(filepath.Dir(p), "secret-missing.sqlite"), Options{AllowExternalACL: onWindows, ReadOnly: true})
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil {
			t.Fatalf("case %d: no error", i)
		}
		msg := strings.ToLower(err.Error())
		for _, secret := range []string{"beef", "secret", filepath.Dir(p)} {
			if strings.Contains(msg, strings.ToLower(secret)) {
				t.Errorf("case %d: message %q echoes an input", i, msg)
			}
		}
	}
}

// TestNotADatabase: an existing file that is not SQLite is StateConflict
// and is left untouched.
func TestNotADatabase(t *testing.T) {
	p := filepath.Join(privateDir(t), "junk.sqlite")
	junk := []byte(strings.Repeat("not a database, just text. ", 200))
	if err := os.WriteFile(p, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	before := fileSHA(t, p)
	_, err := Open(p, Options{AllowExternalACL: onWindows})
	wantClass(t, err, ErrStateConflict)
	_, err = Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true})
	if err == nil {
		t.Fatal("read-only open of junk accepted")
	}
	if fileSHA(t, p) != before {
		t.Fatal("junk file changed")
	}
}

// TestReadOnlyUnusableSchema: a read-only ledger on a damaged or unsafe
// schema still answers the doctor but refuses reads and dry runs.
func TestReadOnlyUnusableSchema(t *testing.T) {
	requireFixtures(t)
	for _, name := range []string{"v1-unsafe.sqlite", "broken-fingerprint.sqlite", "broken-extra-meta-key.sqlite"} {
		p := copyFixture(t, name)
		before := fileSHA(t, p)
		l, err := Open(p, Options{AllowExternalACL: onWindows, ReadOnly: true, Clock: fixedClock(1e9)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = l.reconcileFloat(600, 600, true)
		if !errors.Is(err, ErrStateConflict) {
			t.Errorf("%s: dry run %v", name, err)
		}
		_, err = l.Get("7a5c0001-0000-4000-8000-000000000001")
		if !errors.Is(err, ErrStateConflict) {
			t.Errorf("%s: get %v", name, err)
		}
		l.Close()
		if fileSHA(t, p) != before {
			t.Errorf("%s: file changed", name)
		}
	}
}
