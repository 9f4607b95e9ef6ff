package ledger

import (
	"context"
	"strings"
	"testing"
)

// TestReadPassesNeedNoSort: the statements of the doctor and of the dry
// run are served in storage or index order, so SQLite sorts nothing and
// needs no temporary file, whatever the ledger's size (contract 8.7). A
// changed statement that needs a sort, or that loses the index its
// selection uses, fails here.
func TestReadPassesNeedNoSort(t *testing.T) {
	l, _, _ := openTest(t)
	statements := map[string]string{
		"events by text id":  eventsByTextIDSQL,
		"events by any id":   eventsByAnyIDSQL,
		"tasks":              doctorTasksSQL(false),
		"tasks, any id":      doctorTasksSQL(true),
		"parent edges":       parentEdgesSQL,
		"task shape":         taskShapeSQL,
		"examined active":    examinedActiveSQL,
		"examined pending":   examinedPendingSQL,
		"examined scan":      examinedScanSQL,
		"examined share":     examinedShareSQL,
		"constraint recheck": checkConstraintsSQL,
	}
	wantIndex := map[string]string{
		"parent edges":     "tasks_parent_idx",
		"examined active":  "tasks_status_idx",
		"examined pending": "tasks_delivery_idx",
		"examined share":   "tasks_delivery_idx",
	}
	for name, q := range statements {
		rows, err := l.conn.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, reconcileParams{}.named()...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "TEMP B-TREE") || strings.Contains(text, "AUTOMATIC") {
			t.Errorf("%s sorts or builds an index:\n%s", name, text)
		}
		if idx := wantIndex[name]; idx != "" && !strings.Contains(text, idx) {
			t.Errorf("%s does not use %s:\n%s", name, idx, text)
		}
	}
}
