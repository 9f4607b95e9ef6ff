// Package refcheck holds the drop-in law for state files the reference
// (Python) engine wrote, for the tests and fuzz targets that check it: the
// bytes the reference writer produces for a document (model/sweep's model
// of that writer) read back in this engine's codec to the document the
// reference reader gives, and this codec's write on top reads back to that
// same document both in this codec and in the reference's reading.
package refcheck

import (
	"errors"
	"fmt"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// Check applies the law to doc and describes the first violation. doc must
// not hold a key of divergence D4 (the bare-key pattern plus a trailing
// newline), which the reference itself cannot read back.
func Check(doc *value.Map) error {
	text := sweep.ReferenceText(doc)
	want := sweep.ReferenceReading(doc)
	if model, ok := sweep.ReadReference(text); !ok || !value.EqualOrdered(model, want) {
		return fmt.Errorf("the model's reader disagrees with its writer on\n%s", text)
	}
	got, err := yamlsubset.Parse(text)
	if err != nil {
		return fmt.Errorf("reference text refused: %w\n%s", err, text)
	}
	if !value.EqualOrdered(got, want) {
		return errors.New("reference text read as another document\n" + string(text))
	}
	ours := yamlsubset.Emit(got)
	again, err := yamlsubset.Parse(ours)
	if err != nil || !value.EqualOrdered(again, want) {
		return fmt.Errorf("our write on top does not read back (%v)\n%s", err, ours)
	}
	if ref, ok := sweep.ReadReference(ours); !ok || !value.EqualOrdered(ref, want) {
		return errors.New("the reference would read our write on top as another document\n" + string(ours))
	}
	return nil
}
