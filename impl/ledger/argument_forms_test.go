package ledger_test

import (
	"context"
	"errors"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
)

// The API's forms for arguments as the reference took them (a path's
// text judged alone, a fingerprint's shape, whether a ledger exists, a
// reason code that may be given empty, graces as float seconds), used
// as a command line uses them.

func TestCheckPathJudgesTheTextAlone(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"", ":memory:", "a\x00b", "..", dir + "/..", `\\server\share\x.db`} {
		if err := ledger.CheckPath(bad); !errors.Is(err, ledger.ErrInvalidInput) {
			t.Errorf("CheckPath(%q) = %v, want ErrInvalidInput", bad, err)
		}
	}
	good := filepath.Join(dir, "missing", "tasks.sqlite")
	for _, ok := range []string{good, good + "/", "tasks.sqlite"} {
		if err := ledger.CheckPath(ok); err != nil {
			t.Errorf("CheckPath(%q) = %v", ok, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("CheckPath touched the disk: %v", err)
	}
}

func TestValidPayloadHash(t *testing.T) {
	for h, want := range map[string]bool{
		strings.Repeat("ab", 32):      true,
		strings.Repeat("0f", 32):      true,
		strings.Repeat("AB", 32):      false,
		strings.Repeat("a", 63):       false,
		strings.Repeat("a", 65):       false,
		strings.Repeat("g", 64):       false,
		"":                            false,
		strings.Repeat("a", 63) + " ": false,
	} {
		if got := ledger.ValidPayloadHash(h); got != want {
			t.Errorf("ValidPayloadHash(%q) = %v", h, got)
		}
	}
}

func TestDatabaseMissingCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "tasks.sqlite")
	opts := ledger.Options{AllowExternalACL: onWindows}
	missing, err := ledger.DatabaseMissing(path, opts)
	if err != nil || !missing {
		t.Fatalf("no file: missing %v, %v", missing, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("DatabaseMissing made %d entries", len(entries))
	}
	if _, err := ledger.DatabaseMissing(":memory:", opts); !errors.Is(err, ledger.ErrInvalidInput) {
		t.Fatalf("a refused path: %v, want ErrInvalidInput", err)
	}
	// The directory is made here: Open on Windows makes no missing ones.
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if missing, err := ledger.DatabaseMissing(path, opts); err != nil || missing {
		t.Fatalf("after Open: missing %v, %v", missing, err)
	}
}

func TestOptionalCodeGivenEmptyIsMalformed(t *testing.T) {
	now := 1000.0
	l, err := ledger.Open(filepath.Join(t.TempDir(), "tasks.sqlite"),
		ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	task, err := l.CreateContext(ctx, ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	empty := ""
	if _, err := l.CloseTaskOptionalCode(ctx, task.ID, ledger.StatusFailed, &empty); !errors.Is(err, ledger.ErrInvalidInput) {
		t.Fatalf("close with a given empty code: %v, want ErrInvalidInput", err)
	}
	closed, err := l.CloseTaskOptionalCode(ctx, task.ID, ledger.StatusFailed, nil)
	if err != nil || closed.TerminalCode != ledger.NoCode {
		t.Fatalf("close without a code: %+v, %v", closed, err)
	}
	// An identical repeat answers before the code is looked at.
	if again, err := l.CloseTaskOptionalCode(ctx, task.ID, ledger.StatusFailed, &empty); err != nil || again.Version != closed.Version {
		t.Fatalf("identical repeat with an empty code: %+v, %v", again, err)
	}
	if _, err := l.SetDeliveryOptionalCode(ctx, task.ID, ledger.DeliveryFailed, &empty); !errors.Is(err, ledger.ErrInvalidInput) {
		t.Fatalf("delivery with a given empty code: %v, want ErrInvalidInput", err)
	}
	code := string(ledger.CodeTransportFailed)
	if got, err := l.SetDeliveryOptionalCode(ctx, task.ID, ledger.DeliveryFailed, &code); err != nil || got.DeliveryCode != ledger.CodeTransportFailed {
		t.Fatalf("delivery with a code: %+v, %v", got, err)
	}
}

func TestReconcileSecondsTakesFloatGraces(t *testing.T) {
	now := 1000.0
	l, err := ledger.Open(filepath.Join(t.TempDir(), "tasks.sqlite"),
		ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: onWindows}, func() float64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	task, err := l.CreateContext(ctx, ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.StartContext(ctx, task.ID); err != nil {
		t.Fatal(err)
	}
	now += 1
	for _, bad := range []float64{-1, math.Inf(1), math.NaN(), math.Copysign(math.Inf(1), -1)} {
		if _, err := ledgerrows.ReconcileSeconds(ctx, l, bad, 0, true); !errors.Is(err, ledger.ErrInvalidInput) {
			t.Errorf("active grace %v: %v, want ErrInvalidInput", bad, err)
		}
	}
	// Zero is zero (not the default), and a grace beyond what a
	// time.Duration holds is taken.
	zero, err := ledgerrows.ReconcileSeconds(ctx, l, 0, 0, true)
	if err != nil || zero.TasksTimedOut != 1 {
		t.Fatalf("zero grace: %+v, %v; want the task timed out", zero, err)
	}
	none, err := l.ReconcileContext(ctx, ledger.ReconcileOptions{ActiveGrace: new(time.Duration(0)), DeliveryGrace: new(time.Duration(0)), DryRun: true})
	if err != nil || none != zero {
		t.Fatalf("no grace: %+v, %v; want %+v", none, err, zero)
	}
	huge, err := ledgerrows.ReconcileSeconds(ctx, l, 1e300, 1e300, true)
	if err != nil || huge.TasksTimedOut != 0 || huge.FreshActiveRetained != 1 {
		t.Fatalf("grace 1e300: %+v, %v; want the task retained", huge, err)
	}
}
