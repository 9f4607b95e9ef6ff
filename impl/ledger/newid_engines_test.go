package ledger_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/postgres"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// TestNewIDMustBeCanonical: on both engines, a create without an id takes
// one from Options.NewID, and an id that is not canonical (here upper
// case) is an internal error, "new id failed", with nothing created; a
// canonical one names the task. The two engines share the rule (idOrNew).
func TestNewIDMustBeCanonical(t *testing.T) {
	const upper = "7A5C0001-0000-4000-8000-00000000000A"
	const canonical = "7a5c0001-0000-4000-8000-00000000000a"
	open := map[string]func(t *testing.T, newID func() (string, error)) *ledger.Ledger{
		"sqlite": func(t *testing.T, newID func() (string, error)) *ledger.Ledger {
			l, err := ledger.Open(filepath.Join(t.TempDir(), "ledger.sqlite"), ledger.Options{AllowExternalACL: onWindows, NewID: newID})
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
		"postgres": func(t *testing.T, newID func() (string, error)) *ledger.Ledger {
			l, err := postgres.Open(context.Background(), pgtest.Database(t), postgres.Options{AllowExternalACL: onWindows, NewID: newID})
			if err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			next := upper
			l := open[engine](t, func() (string, error) { return next, nil })
			defer l.Close()
			_, err := l.Create(ledger.CreateParams{})
			if err == nil || errors.Is(err, ledger.ErrInvalidInput) || errors.Is(err, ledger.ErrStateConflict) || errors.Is(err, ledger.ErrTaskNotFound) || ledger.Reason(err) != "new id failed" {
				t.Fatalf("create with a non-canonical new id: %v, want InternalError \"new id failed\"", err)
			}
			if page, err := l.List(ledger.ListFilter{}); err != nil || len(page.Tasks) != 0 {
				t.Fatalf("after the refused create: %d tasks, %v", len(page.Tasks), err)
			}
			next = canonical
			task, err := l.Create(ledger.CreateParams{})
			if err != nil || task.ID != canonical {
				t.Fatalf("create with a canonical new id: %+v, %v", task, err)
			}
		})
	}
}
