package ledger_test

import (
	"testing"

	model "github.com/stateguard/stateguard/model/ledger"
)

// TestGivenEmptyCode: a code given as the empty string is a malformed code
// (InvalidInput), not an absent one, on the way to a new state; the
// idempotent repeat returns the stored task before looking at it.
func TestGivenEmptyCode(t *testing.T) {
	empty := ""
	if _, err := inState(t, model.StatusRunning, true, false).CloseCode(idA, model.StatusFailed, &empty, 200); errClass(err) != "InvalidInput" {
		t.Errorf("close with an empty code: %s, want InvalidInput", errClass(err))
	}
	if _, err := inState(t, model.StatusRunning, true, false).CloseCode(idA, model.StatusFailed, nil, 200); err != nil {
		t.Errorf("close without a code: %v", err)
	}
	if _, err := inState(t, model.StatusFailed, true, false).CloseCode(idA, model.StatusFailed, &empty, 200); err != nil {
		t.Errorf("repeated close with an empty code: %v", err)
	}
	if _, err := inState(t, model.StatusFailed, true, false).SetDeliveryCode(idA, model.DeliveryFailed, &empty, 200); errClass(err) != "InvalidInput" {
		t.Errorf("delivery with an empty code: %s, want InvalidInput", errClass(err))
	}
	if _, err := inState(t, model.StatusFailed, true, false).SetDeliveryCode(idA, model.DeliveryFailed, nil, 200); err != nil {
		t.Errorf("delivery without a code: %v", err)
	}
	if _, err := inState(t, model.StatusFailed, true, true).SetDeliveryCode(idA, model.DeliveryFailed, &empty, 200); errClass(err) != "StateConflict" {
		t.Errorf("internal task, delivery failed with an empty code: %s, want StateConflict (kind before code)", errClass(err))
	}
	// The string form keeps "" as no code.
	if _, err := inState(t, model.StatusRunning, true, false).Close(idA, model.StatusFailed, "", 200); err != nil {
		t.Errorf("string form, close with \"\": %v", err)
	}
}
