package sweepstate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
)

// A user who closes an item must learn from the README which fields keep it
// closed, or validate will quietly reopen it as fix_pending.
func TestReadmeNamesTheEvidenceFields(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range sweepcore.EvidenceFields {
		if !strings.Contains(string(readme), "| `"+field+"` |") {
			t.Errorf("README's table of evidence fields has no row for `%s`", field)
		}
	}
}
