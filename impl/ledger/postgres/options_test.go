package postgres

import (
	"reflect"
	"testing"
	"time"

	"github.com/stateguard/stateguard/impl/ledger"
)

// TestOptionsReachTheLedger: every setting of ledger.Options that a
// server ledger applies has its field in Options, and Open and Restore
// hand it over. AllowExternalACL is among them: a server ledger's backup
// writes a file, and Restore reads one, which Windows opens only with the
// acknowledgement (spec 11.3, 20.6); without the field no embedder on
// Windows could back up or restore a server ledger.
func TestOptionsReachTheLedger(t *testing.T) {
	applied := []string{"ReadOnly", "MustExist", "BusyTimeout", "NewID", "AllowExternalACL"}
	set := reflect.ValueOf(&Options{}).Elem()
	for _, name := range applied {
		f := set.FieldByName(name)
		if !f.IsValid() {
			t.Fatalf("postgres.Options has no %s", name)
		}
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int64:
			f.Set(reflect.ValueOf(3 * time.Second))
		case reflect.Func:
			f.Set(reflect.ValueOf(func() (string, error) { return "", nil }))
		}
	}
	got := reflect.ValueOf(ledgerOptions(set.Interface().(Options)))
	for _, name := range applied {
		v := got.FieldByName(name)
		if !v.IsValid() {
			t.Fatalf("ledger.Options has no %s", name)
		}
		if v.IsZero() {
			t.Errorf("Options.%s does not reach the ledger's options", name)
		}
	}
	if got.FieldByName("Clock").IsValid() && !got.FieldByName("Clock").IsZero() {
		t.Error("a server ledger's time is the server's: no ledger.Options.Clock")
	}
	var _ ledger.Options = ledgerOptions(Options{})
}
