package cliload

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	model "github.com/stateguard/stateguard/model/ledger"
)

// ledgerStep is one OK'd call of a worker, with the clock it used (read
// back from the task it returned; the processes use the wall clock).
type ledgerStep struct {
	kind, id, status, code string
	now                    float64
}

// RunLedger loads one ledger: every worker drives its own tasks through
// create, start, heartbeat, close and delivery, reads them back, and runs
// reconcile (a writer with graces no task reaches) and its dry run. The
// model replays every OK'd task call (workers own disjoint tasks, so their
// calls commute) and each task's final get must equal the model's task.
func RunLedger(cfg Config) (Report, error) {
	db := cfg.DB
	if db == "" {
		db = filepath.Join(cfg.Dir, "ledger.sqlite")
	}
	env := append(os.Environ(), cfg.Env...)
	ledgerCLI := func(args ...string) (call, error) {
		return run(cfg.Bin, env, append([]string{"--db", db}, args...)...)
	}
	if c, err := ledgerCLI("init"); err != nil || c.status != 0 {
		return Report{}, fmt.Errorf("init: %q %v", c.stdout, err)
	}
	var t tally
	steps := make([][]ledgerStep, cfg.Procs)
	elapsed, err := runWorkers(cfg, func(w int, deadline time.Time) error {
		task, phase := 0, 0
		id := func() string { return fmt.Sprintf("10ad%04x-0000-4000-8000-%012x", w, task) }
		for n := 0; time.Now().Before(deadline); n++ {
			var args []string
			kind := ""
			switch {
			case n%13 == 12:
				args = []string{"reconcile", "--dry-run"}
			case n%29 == 28:
				args = []string{"reconcile", "--active-grace-seconds", "1e9", "--delivery-grace-seconds", "1e9"}
			case n%7 == 6 && phase > 0:
				args = []string{"get", id()}
			default:
				kind = []string{"create", "start", "heartbeat", "close", "delivery"}[phase]
				switch kind {
				case "create":
					args = []string{"create", "--task-id", id(), "--timeout-seconds", "3600"}
				case "close":
					args = []string{"close", id(), "--status", "succeeded", "--code", "completed"}
				case "delivery":
					args = []string{"delivery", id(), "--status", "delivered", "--code", "transport_acknowledged"}
				default:
					args = []string{kind, id()}
				}
			}
			c, err := ledgerCLI(args...)
			if err != nil {
				return err
			}
			var answer struct {
				OK    bool
				Error string
				Task  map[string]any
			}
			json.Unmarshal([]byte(c.stdout), &answer)
			class := "ok"
			if !answer.OK {
				class = fmt.Sprintf("%s (exit %d)", answer.Error, c.status)
			}
			t.add(c, args[0]+" "+class)
			if kind == "" || !answer.OK {
				continue
			}
			st := ledgerStep{kind: kind, id: id(), status: "succeeded", code: "completed"}
			field := map[string]string{"create": "created_at", "start": "started_at", "heartbeat": "updated_at",
				"close": "ended_at", "delivery": "delivery_updated_at"}[kind]
			st.now, _ = answer.Task[field].(float64)
			if kind == "delivery" {
				st.status, st.code = "delivered", "transport_acknowledged"
			}
			steps[w] = append(steps[w], st)
			if phase = (phase + 1) % 5; phase == 0 {
				task++
			}
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	rep := Report{Engine: "task-state-guard", Procs: cfg.Procs, Elapsed: elapsed, Latencies: t.latencies, ClientCPU: t.cpu, Answers: t.answers}
	for class := range t.answers {
		if len(class) < 3 || class[len(class)-3:] != " ok" {
			rep.Forbidden = append(rep.Forbidden, class)
		}
	}
	m := &model.Model{}
	ids := map[string]bool{}
	for _, ws := range steps {
		for _, s := range ws {
			var err error
			switch s.kind {
			case "create":
				to := 3600.0
				_, err = m.Create(model.CreateParams{TaskID: s.id, TimeoutSeconds: &to, DeliveryRequired: true}, s.now)
			case "start":
				_, err = m.Start(s.id, s.now)
			case "heartbeat":
				_, err = m.Heartbeat(s.id, s.now)
			case "close":
				_, err = m.Close(s.id, s.status, s.code, s.now)
			case "delivery":
				_, err = m.SetDelivery(s.id, s.status, s.code, s.now)
			}
			if err != nil {
				rep.Lost = append(rep.Lost, fmt.Sprintf("the model refuses %s of %s, which the ledger answered ok: %v", s.kind, s.id, err))
			}
			ids[s.id] = true
		}
	}
	for id := range ids {
		want, _ := m.Get(id)
		c, err := ledgerCLI("get", id)
		if err != nil {
			return rep, err
		}
		var got struct{ Task map[string]any }
		json.Unmarshal([]byte(c.stdout), &got)
		if a, b := canonical(got.Task), canonical(taskMap(want)); a != b {
			rep.Lost = append(rep.Lost, fmt.Sprintf("task %s: ledger %s, model %s", id, a, b))
		}
	}
	return rep, nil
}

// taskMap is the model's task as the CLI prints it.
func taskMap(t model.Task) map[string]any {
	opt := func(p *float64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	str := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	return map[string]any{
		"id": t.ID, "parent_id": str(t.ParentID), "status": t.Status, "delivery_status": t.DeliveryStatus,
		"delivery_required": t.DeliveryRequired, "has_payload_hash": t.PayloadHash != nil,
		"timeout_seconds": opt(t.TimeoutSeconds), "created_at": t.CreatedAt, "started_at": opt(t.StartedAt),
		"updated_at": t.UpdatedAt, "ended_at": opt(t.EndedAt), "deadline_at": opt(t.DeadlineAt),
		"delivery_updated_at": t.DeliveryUpdatedAt, "terminal_code": str(t.TerminalCode),
		"delivery_code": str(t.DeliveryCode), "version": t.Version,
	}
}

// canonical re-encodes v with every number as float64.
func canonical(v any) string {
	b, _ := json.Marshal(v)
	var back any
	json.Unmarshal(b, &back)
	b, _ = json.Marshal(back)
	return string(b)
}
