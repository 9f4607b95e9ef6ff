package yamlsubset

import "testing"

// TestItemRankIsTheItemOrder: the switch that ranks item keys gives each
// key of itemOrder its position and every other key the place after them.
func TestItemRankIsTheItemOrder(t *testing.T) {
	for i, k := range itemOrder {
		if got := itemRank(k); got != i {
			t.Errorf("itemRank(%q) = %d, want %d", k, got, i)
		}
	}
	for _, k := range []string{"", "id", "Source", "status ", "labels", "writer", "timestamp"} {
		if got := itemRank(k); got != len(itemOrder) {
			t.Errorf("itemRank(%q) = %d, want %d", k, got, len(itemOrder))
		}
	}
}
