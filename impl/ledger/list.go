package ledger

import (
	"context"
	"iter"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/stateguard/stateguard/impl/ledger/internal/floatseconds"
)

// List page sizes: the default when ListFilter.Limit is zero, and the
// largest page.
const (
	ListDefaultLimit = 100
	ListMaxLimit     = 1000
)

// ListFilter selects the tasks List returns. Every field that is set must
// hold (and); a list of states matches any of them (or). The zero value
// selects every task.
type ListFilter struct {
	Statuses      []Status         // task states; none means any
	Deliveries    []DeliveryStatus // delivery states; none means any
	UpdatedBefore *time.Time       // updated before it
	EndedBefore   *time.Time       // ended before it, so only terminal tasks
	// ParentID selects the direct children of that task; "" means any. A
	// parent no task has selects nothing (it is not TaskNotFound).
	ParentID string
	// After continues a listing: only tasks whose id sorts after it, as
	// ListPage.Next gives it. It is a position, not a task: it need not
	// exist.
	After string
	// Limit is the page size, 1 to ListMaxLimit; 0 means ListDefaultLimit.
	Limit int

	// The cutoffs in the stored form, set by SetUpdatedBeforeSeconds and
	// SetEndedBeforeSeconds; each takes the place of its Time field.
	updatedBeforeSeconds, endedBeforeSeconds *float64
}

// cutoffs are f's two cutoffs in Unix seconds, nil where not given: the
// float nearest to each Time, or the seconds handed over.
func (f ListFilter) cutoffs() (updated, ended *float64) {
	return cutoffSeconds(f.UpdatedBefore, f.updatedBeforeSeconds), cutoffSeconds(f.EndedBefore, f.endedBeforeSeconds)
}

// cutoffSeconds is an optional cutoff in the stored form: seconds when
// given, else the float nearest to t.
func cutoffSeconds(t *time.Time, seconds *float64) *float64 {
	if seconds != nil {
		return seconds
	}
	if t == nil {
		return nil
	}
	v := floatseconds.UnixSeconds(*t)
	return &v
}

// ListPage is one page of List.
type ListPage struct {
	Tasks []Task // in ascending id order; empty, not nil, when none match
	// Next is the After of the following page, or "" when no matching
	// task follows this one.
	Next string
}

// List returns the first page of the tasks that match f, in ascending
// order of their canonical id, after f.After (spec/task-state-guard.md
// §6.9). The order is by id because ids never change: paging with Next
// while writers run returns every task that matched throughout exactly
// once; a task that changes meanwhile appears by its state when its page
// was read. Each page is one read transaction; memory is bounded by the
// page size. Bad input (an unknown state, an id that is not a UUID, a
// non-finite time, a limit out of range) is ErrInvalidInput.
func (l *Ledger) List(f ListFilter) (ListPage, error) {
	return l.ListContext(context.Background(), f)
}

// ListContext is List with a context whose cancellation or deadline ends
// the wait for the database (see Concurrency in the package
// documentation).
func (l *Ledger) ListContext(ctx context.Context, f ListFilter) (ListPage, error) {
	q, err := newListQuery(f)
	if err != nil {
		return ListPage{}, err
	}
	if l.server != nil {
		return l.serverList(ctx, f, q)
	}
	var page ListPage
	err = l.lockedReadTx(ctx, "list", true, func(t *txn) error {
		page = ListPage{Tasks: []Task{}} // a read-only read may be retried
		read, err := q.plan(t)
		if err != nil {
			return err
		}
		if err := q.readPage(t, &page, read.sql, read.args); err != nil {
			return err
		}
		if page.Next == "" && read.windowFull {
			// The walk's window ended before the page was full: the
			// index reads the page instead (the same rows).
			page = ListPage{Tasks: []Task{}}
			return q.readPage(t, &page, read.fallbackSQL, read.fallbackArgs)
		}
		return nil
	})
	if err != nil {
		return ListPage{}, err
	}
	return page, nil
}

// readPage runs one page's statement, which selects up to limit + 1 rows.
func (q *listQuery) readPage(t *txn, page *ListPage, sqlText string, args []any) error {
	if sqlText == "" {
		return nil
	}
	return queryTasks(t, sqlText, args, func(task taskRow) bool {
		if len(page.Tasks) == q.limit {
			// One row past the page: there is a next page.
			page.Next = page.Tasks[q.limit-1].ID
			return false
		}
		page.Tasks = append(page.Tasks, task.public())
		return true
	})
}

// ListAll streams every task that matches f, page after page of f.Limit
// tasks, each page its own read transaction (see List for what paging
// beside writers returns). The first error ends the sequence.
func (l *Ledger) ListAll(f ListFilter) iter.Seq2[Task, error] {
	return l.ListAllContext(context.Background(), f)
}

// ListAllContext is ListAll with a context whose cancellation or deadline
// ends the wait for the database and the sequence (see Concurrency in the
// package documentation).
func (l *Ledger) ListAllContext(ctx context.Context, f ListFilter) iter.Seq2[Task, error] {
	return func(yield func(Task, error) bool) {
		for {
			page, err := l.ListContext(ctx, f)
			if err != nil {
				yield(Task{}, err)
				return
			}
			for _, t := range page.Tasks {
				if !yield(t, nil) {
					return
				}
			}
			if page.Next == "" {
				return
			}
			f.After = page.Next
		}
	}
}

// listQuery is a validated ListFilter: SQL terms with their arguments.
type listQuery struct {
	limit int
	// Each filter's term, the column it reads first, and its arguments.
	status, delivery, updated, ended, parent *listTerm
	after                                    string
	parentID                                 string // canonical, for a server
}

// listTerm is one WHERE term; column is what a scan plan prefixes with
// "+" so that SQLite cannot take an index for it.
type listTerm struct {
	sql  string // with %s where the column goes
	col  string
	args []any
}

func (t *listTerm) render(scan bool) string {
	col := t.col
	if scan {
		col = "+" + col
	}
	return strings.Replace(t.sql, "%s", col, 1)
}

func newListQuery(f ListFilter) (*listQuery, error) {
	q := &listQuery{limit: f.Limit}
	if q.limit == 0 {
		q.limit = ListDefaultLimit
	}
	if q.limit < 1 || q.limit > ListMaxLimit {
		return nil, invalidInput("page size must be 1 to 1000")
	}
	if len(f.Statuses) > 0 {
		args := make([]any, 0, len(f.Statuses))
		for _, s := range f.Statuses {
			if !validStatus(s) {
				return nil, invalidInput("unknown task state")
			}
			if !slices.Contains(args, any(string(s))) {
				args = append(args, string(s))
			}
		}
		q.status = inTerm("status", args)
	}
	if len(f.Deliveries) > 0 {
		args := make([]any, 0, len(f.Deliveries))
		for _, s := range f.Deliveries {
			if !validDelivery(s) {
				return nil, invalidInput("unknown delivery state")
			}
			if !slices.Contains(args, any(string(s))) {
				args = append(args, string(s))
			}
		}
		q.delivery = inTerm("delivery_status", args)
	}
	updated, ended := f.cutoffs()
	for _, b := range []struct {
		v   *float64
		col string
		dst **listTerm
	}{{updated, "updated_at", &q.updated}, {ended, "ended_at", &q.ended}} {
		if b.v == nil {
			continue
		}
		if math.IsNaN(*b.v) || math.IsInf(*b.v, 0) {
			return nil, invalidInput("a time is not a finite number")
		}
		*b.dst = &listTerm{sql: "%s < ?", col: b.col, args: []any{*b.v}}
	}
	if f.ParentID != "" {
		id, err := ParseTaskID(f.ParentID)
		if err != nil {
			return nil, err
		}
		q.parent = &listTerm{sql: "%s = ?", col: "parent_id", args: []any{id}}
		q.parentID = id
	}
	if f.After != "" {
		id, err := ParseTaskID(f.After)
		if err != nil {
			return nil, err
		}
		q.after = id
	}
	return q, nil
}

func inTerm(col string, args []any) *listTerm {
	return &listTerm{sql: "%s IN (?" + strings.Repeat(",?", len(args)-1) + ")", col: col, args: args}
}

func validStatus(s Status) bool {
	switch s {
	case StatusQueued, StatusRunning, StatusSucceeded, StatusFailed, StatusTimedOut, StatusCancelled:
		return true
	}
	return false
}

func validDelivery(s DeliveryStatus) bool {
	switch s {
	case DeliveryPending, DeliveryDelivered, DeliveryFailed, DeliveryNotApplicable:
		return true
	}
	return false
}

// Every state, for an index whose first column a filter leaves open: a
// time filter alone still reads its index (status, updated_at) or
// (delivery_status, ended_at) through every value of the first column.
var (
	allStatuses   = []any{"queued", "running", "succeeded", "failed", "timed_out", "cancelled"}
	allDeliveries = []any{"pending", "delivered", "failed", "not_applicable"}
)

// listPath is one index that can select the rows of a filter: the index,
// and the terms it serves.
type listPath struct {
	index string
	terms []*listTerm
}

// paths lists the indexes that can serve the filter: tasks_parent_idx for
// a parent; tasks_status_idx for states and updated_at; tasks_delivery_idx
// for delivery states and ended_at.
func (q *listQuery) paths() []listPath {
	var out []listPath
	if q.parent != nil {
		out = append(out, listPath{"tasks_parent_idx", []*listTerm{q.parent}})
	}
	if q.status != nil || q.updated != nil {
		s := q.status
		if s == nil {
			s = inTerm("status", allStatuses)
		}
		p := listPath{"tasks_status_idx", []*listTerm{s}}
		if q.updated != nil {
			p.terms = append(p.terms, q.updated)
		}
		out = append(out, p)
	}
	if q.delivery != nil || q.ended != nil {
		d := q.delivery
		if d == nil {
			d = inTerm("delivery_status", allDeliveries)
		}
		p := listPath{"tasks_delivery_idx", []*listTerm{d}}
		if q.ended != nil {
			p.terms = append(p.terms, q.ended)
		}
		out = append(out, p)
	}
	return out
}

// listRead is how one page is read: a statement, and for a walk along the
// id that ran out of its window before the page was full, the statement
// that reads the page instead.
type listRead struct {
	sql          string
	args         []any
	windowFull   bool
	fallbackSQL  string
	fallbackArgs []any
}

// plan chooses how to read the page. Two plans select the same rows in
// the same order:
//
//   - through an index that serves a filter: every row the index selects
//     is sought in the table, checked against the other terms and the
//     position, and the page's rows are kept in id order by a sort that
//     holds at most one page (ORDER BY with LIMIT);
//   - along the id (the primary key's index) from the position on, every
//     row checked against the terms, until the page is full.
//
// The index reads every row its filter selects; the walk reads about
// page size x rows / matching rows. Counting the index's entries (in the
// index alone, no table read) up to a bound k = sqrt(page x rows) decides:
// fewer than k entries take the index, else the walk, so either reads
// about k rows when the matches are spread over the ids (random ids are).
// The walk is held to a window of k ids from the position: matches
// bunched elsewhere would make it read on to the end of the ids, so when
// the window ends before the page is full, the index reads the page. The
// choice is speed only: every plan gives the same page.
func (q *listQuery) plan(t *txn) (listRead, error) {
	var rows float64
	if err := t.QueryRowContext(t.ctx, `SELECT ifnull(max(rowid), 0) FROM tasks`).Scan(&rows); err != nil {
		return listRead{}, err
	}
	bound := int64(math.Sqrt(float64(q.limit+1)*rows)) + 1
	best, bestCount := -1, bound
	paths := q.paths()
	counted := paths
	switch t.l.plans.list {
	case "index":
		if len(paths) > 0 {
			best = 0
		}
		counted = nil
	case "scan":
		counted = nil
	}
	fallback := 0
	fallbackCount := int64(math.MaxInt64)
	for i, p := range counted {
		where, args := renderTerms(p.terms, false)
		var n int64
		err := t.QueryRowContext(t.ctx, `SELECT count(*) FROM (SELECT 1 FROM tasks INDEXED BY `+p.index+
			` WHERE `+where+` LIMIT ?)`, append(args, bound)...).Scan(&n)
		if err != nil {
			return listRead{}, err
		}
		if n < bestCount {
			best, bestCount = i, n
		}
		if n < fallbackCount {
			fallback, fallbackCount = i, n
		}
	}
	if best >= 0 {
		p := paths[best]
		sqlText, args := q.statement(p.index, p.with(q.terms()), false, "")
		return listRead{sql: sqlText, args: args}, nil
	}
	if len(paths) == 0 {
		// No filter: every row along the id is on the page.
		sqlText, args := q.statement("", q.terms(), true, "")
		return listRead{sql: sqlText, args: args}, nil
	}
	// The window: the first k ids from the position, read in the
	// primary key's index alone.
	size := bound
	if t.l.plans.list == "scan" {
		size = 2 // a forced walk's window is small, so tests meet its end
	}
	window := `SELECT count(*), max(id) FROM (SELECT id FROM tasks ORDER BY id LIMIT ?)`
	windowArgs := []any{size}
	if q.after != "" {
		window = `SELECT count(*), max(id) FROM (SELECT id FROM tasks WHERE id > ? ORDER BY id LIMIT ?)`
		windowArgs = []any{q.after, size}
	}
	var n int64
	var last *string
	if err := t.QueryRowContext(t.ctx, window, windowArgs...).Scan(&n, &last); err != nil {
		return listRead{}, err
	}
	if n == 0 || last == nil {
		return listRead{}, nil // nothing follows the position
	}
	sqlText, args := q.statement("", q.terms(), true, *last)
	p := paths[fallback]
	fallbackSQL, fallbackArgs := q.statement(p.index, p.with(q.terms()), false, "")
	return listRead{sql: sqlText, args: args, windowFull: n == size, fallbackSQL: fallbackSQL, fallbackArgs: fallbackArgs}, nil
}

// terms are the filter's own terms (nil where a filter is not set).
func (q *listQuery) terms() []*listTerm {
	return []*listTerm{q.status, q.delivery, q.updated, q.ended, q.parent}
}

// with returns the path's terms (a term over every state that lets a time
// filter alone use its index included) followed by the others of terms.
func (p listPath) with(terms []*listTerm) []*listTerm {
	out := append([]*listTerm(nil), p.terms...)
	for _, t := range terms {
		if t != nil && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// statement renders the page's SELECT: through index, or (scan) along the
// id with every filter's column hidden from the planner; upTo, when set,
// ends the walk's window at that id.
func (q *listQuery) statement(index string, terms []*listTerm, scan bool, upTo string) (string, []any) {
	var b strings.Builder
	b.WriteString(`SELECT ` + taskColumns + ` FROM tasks`)
	if index != "" {
		b.WriteString(` INDEXED BY ` + index)
	}
	where, args := renderTerms(terms, scan)
	if q.after != "" {
		if where != "" {
			where += " AND "
		}
		where += "id > ?"
		args = append(args, q.after)
	}
	if upTo != "" {
		if where != "" {
			where += " AND "
		}
		where += "id <= ?"
		args = append(args, upTo)
	}
	if where != "" {
		b.WriteString(` WHERE ` + where)
	}
	b.WriteString(` ORDER BY id LIMIT ?`)
	return b.String(), append(args, q.limit+1)
}

// renderTerms joins the terms that are set with AND.
func renderTerms(terms []*listTerm, scan bool) (string, []any) {
	var parts []string
	var args []any
	for _, t := range terms {
		if t == nil {
			continue
		}
		parts = append(parts, t.render(scan))
		args = append(args, t.args...)
	}
	return strings.Join(parts, " AND "), args
}
