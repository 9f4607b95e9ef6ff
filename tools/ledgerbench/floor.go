package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	_ "modernc.org/sqlite" // the driver the ledger uses
)

// The floors: the same work as a CLI command, done directly through the
// SQLite driver in one process with set-based SQL and none of the
// ledger's checks (storage guard, schema validation, read-only snapshot,
// per-row value checks). Any implementation on this schema and driver
// pays at least this much. Each runs in a child process like the CLI, so
// process start counts on both sides.

// floorWork maps a floor name to its work on an open connection.
var floorWork = map[string]func(ctx context.Context, c *sql.Conn) error{
	"reconcile": floorReconcile,
	"dry-run":   floorDryRun,
	"doctor":    floorDoctor,
	"create":    floorCreate,
	"get":       floorGet,
}

// runFloor opens db with the driver alone and runs one floor.
func runFloor(name, db, synchronous string) error {
	work, ok := floorWork[name]
	if !ok {
		return fmt.Errorf("no floor %q", name)
	}
	pool, err := sql.Open("sqlite", "file:"+db)
	if err != nil {
		return err
	}
	defer pool.Close()
	pool.SetMaxOpenConns(1)
	ctx := context.Background()
	c, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, p := range []string{"PRAGMA busy_timeout = 5000", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = " + synchronous} {
		if _, err := c.ExecContext(ctx, p); err != nil {
			return err
		}
	}
	return work(ctx, c)
}

// inTx runs stmts in one transaction opened with begin.
func inTx(ctx context.Context, c *sql.Conn, begin string, stmts ...string) error {
	if _, err := c.ExecContext(ctx, begin); err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := c.ExecContext(ctx, s); err != nil {
			c.ExecContext(ctx, "ROLLBACK")
			return err
		}
	}
	_, err := c.ExecContext(ctx, "COMMIT")
	return err
}

// The reconcile decisions at the pinned clock with the default graces of
// 600 s, as SQL over a row.
var (
	floorNow   = fmt.Sprint(seedNow)
	floorStale = `status = 'running' AND ((deadline_at IS NOT NULL AND deadline_at <= ` + floorNow + `) OR updated_at <= ` + floorNow + ` - 600)`
	floorDue   = `delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled') AND ended_at <= ` + floorNow + ` - 600`
	floorTo    = `CASE WHEN delivery_required = 1 THEN 'failed' ELSE 'not_applicable' END`
	floorCode  = `CASE WHEN delivery_required = 1 THEN 'delivery_grace_expired' ELSE 'internal_task' END`
)

// floorReconcile: the stale tasks time out and the expired deliveries
// settle, with one INSERT ... SELECT and one UPDATE each, in one write
// transaction.
func floorReconcile(ctx context.Context, c *sql.Conn) error {
	timeoutCode := `CASE WHEN deadline_at IS NOT NULL AND deadline_at <= ` + floorNow + ` THEN 'deadline_exceeded' ELSE 'restart_stale' END`
	return inTx(ctx, c, "BEGIN IMMEDIATE",
		`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, 'task_transition', 'running', 'timed_out', `+floorNow+`, `+timeoutCode+` FROM tasks WHERE `+floorStale+` ORDER BY created_at, id`,
		`UPDATE tasks SET status = 'timed_out', updated_at = `+floorNow+`, ended_at = `+floorNow+`, terminal_code = `+timeoutCode+`,
			version = version + 1 WHERE `+floorStale,
		`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			SELECT id, 'delivery_transition', 'pending', `+floorTo+`, `+floorNow+`, `+floorCode+` FROM tasks WHERE `+floorDue+` ORDER BY ended_at, id`,
		`UPDATE tasks SET delivery_status = `+floorTo+`, delivery_updated_at = `+floorNow+`, delivery_code = `+floorCode+`,
			version = version + 1 WHERE `+floorDue)
}

// floorDryRun counts what the reconcile would do, in one read transaction.
func floorDryRun(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	defer c.ExecContext(ctx, "ROLLBACK")
	var a, b, d, e int
	if err := c.QueryRowContext(ctx, `SELECT count(*), ifnull(sum(`+strings.TrimPrefix(floorStale, "status = 'running' AND ")+`), 0)
		FROM tasks WHERE status IN ('queued','running')`).Scan(&a, &b); err != nil {
		return err
	}
	return c.QueryRowContext(ctx, `SELECT count(*), ifnull(sum(ended_at <= `+floorNow+` - 600), 0)
		FROM tasks WHERE delivery_status = 'pending' AND status IN ('succeeded','failed','timed_out','cancelled')`).Scan(&d, &e)
}

// floorDoctor: quick_check, foreign_key_check, the counts and a recursive
// walk up the parent links that finds the tasks on a cycle.
func floorDoctor(ctx context.Context, c *sql.Conn) error {
	if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	defer c.ExecContext(ctx, "ROLLBACK")
	var ok string
	if err := c.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&ok); err != nil || ok != "ok" {
		return errors.Join(err, fmt.Errorf("quick_check %q", ok))
	}
	for _, q := range []string{
		"PRAGMA foreign_key_check",
		"SELECT status, count(*) FROM tasks GROUP BY status",
		"SELECT delivery_status, count(*) FROM tasks GROUP BY delivery_status",
		"SELECT count(*) FROM task_events",
		`WITH RECURSIVE up(start, cur, depth) AS (
			SELECT id, parent_id, 1 FROM tasks WHERE parent_id IS NOT NULL
			UNION ALL
			SELECT up.start, t.parent_id, up.depth + 1 FROM up JOIN tasks t ON t.id = up.cur
			WHERE up.cur <> up.start AND t.parent_id IS NOT NULL AND up.depth <= (SELECT count(*) FROM tasks))
		SELECT count(*) FROM up WHERE cur = start`,
	} {
		rows, err := c.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// floorCreate inserts one task and its created event in one write
// transaction.
func floorCreate(ctx context.Context, c *sql.Conn) error {
	id := "ffffffff-0000-4000-8000-ffffffffffff"
	return inTx(ctx, c, "BEGIN IMMEDIATE",
		`INSERT INTO tasks (id, status, delivery_status, delivery_required, created_at, updated_at, delivery_updated_at, version)
			VALUES ('`+id+`', 'queued', 'pending', 1, `+floorNow+`, `+floorNow+`, `+floorNow+`, 0)`,
		`INSERT INTO task_events (task_id, event_kind, from_value, to_value, occurred_at, code)
			VALUES ('`+id+`', 'created', NULL, 'queued', `+floorNow+`, 'created')`)
}

// floorGet reads one task row by its id.
func floorGet(ctx context.Context, c *sql.Conn) error {
	var status string
	return c.QueryRowContext(ctx, "SELECT status FROM tasks WHERE id = ?", seededID(0)).Scan(&status)
}
