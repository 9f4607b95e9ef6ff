package ledger

import (
	"context"
	"math"
	"testing"
)

// TestSQLCompareMatchesSQLite: the reconcile pass decides in Go what the
// apply's SQL decides, so its number comparison must be SQLite's own,
// INTEGER against REAL included, where rounding the integer to a float
// would tie values SQLite tells apart.
func TestSQLCompareMatchesSQLite(t *testing.T) {
	l, _, _ := openTest(t)
	ints := []int64{0, 1, -1, 1 << 53, 1<<53 + 1, -(1<<53 + 1), math.MaxInt64, math.MinInt64, 1700000000}
	floats := []float64{0, 1, -1, 0.5, -0.5, 1 << 53, 1<<53 + 2, -(1 << 53), 9223372036854775807, -9223372036854775808,
		1e19, -1e19, math.Inf(1), math.Inf(-1), 1700000000, 1700000000.25, math.SmallestNonzeroFloat64}
	var values []any
	for _, i := range ints {
		values = append(values, i)
	}
	for _, f := range floats {
		values = append(values, f)
	}
	for _, v := range values {
		for _, x := range floats {
			var got int
			if err := l.conn.QueryRowContext(context.Background(), `SELECT (? > ?) - (? < ?)`, v, x, v, x).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if want := sqlCompare(v, x); got != want {
				t.Errorf("sqlCompare(%T %v, %v) = %d, SQLite says %d", v, v, x, want, got)
			}
		}
	}
}
