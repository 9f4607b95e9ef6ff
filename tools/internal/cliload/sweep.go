package cliload

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// sweepNow is the one time every owned call stamps, so that calls of
// different workers commute and any replay order gives the same document.
const sweepNow = "2026-07-02T12:00:00Z"

// RunSweep loads one state file: every worker upserts its own items under
// its own source, advances its own cursor, records runs, validates and
// reads, all under one lease. The model replays every call that answered
// OK (each worker's in order; workers touch disjoint keys and stamp the
// same time, so their calls commute) and must give the final file exactly.
func RunSweep(cfg Config) (Report, error) {
	state := filepath.Join(cfg.Dir, "state.yml")
	env := append(os.Environ(), cfg.Env...)
	sweepCLI := func(args ...string) (call, error) {
		return run(cfg.Bin, env, append([]string{args[0], "--state", state}, args[1:]...)...)
	}
	c, err := sweepCLI("lease-acquire", "--writer", "load", "--now", sweepNow)
	if err != nil || c.stdout != "OK\n" {
		return Report{}, fmt.Errorf("lease-acquire: %q %v", c.stdout, err)
	}
	var t tally
	okCalls := make([][]sweep.Command, cfg.Procs)
	elapsed, err := runWorkers(cfg, func(w int, deadline time.Time) error {
		src := fmt.Sprintf("w%d", w)
		items := 0
		for n := 0; time.Now().Before(deadline); n++ {
			var args []string
			var cmd sweep.Command
			switch n % 8 {
			case 0, 1, 2:
				text := fmt.Sprintf(`{"status": "ingested", "title": "item %d of %s"}`, items, src)
				v, _ := pyjson.Decode(text)
				id := fmt.Sprint(items)
				args = []string{"upsert-item", "--source", src, "--id", id, "--json", text, "--writer", "load", "--now", sweepNow}
				cmd = sweep.UpsertItem{Source: src, ID: id, Writer: "load", Now: sweepNow, Item: sweep.Decoded{Value: v, OK: true}}
			case 3:
				if items == 0 {
					continue
				}
				last := fmt.Sprint(items - 1)
				args = []string{"cursor-advance", "--source", src, "--to", last, "--past-item", last, "--writer", "load", "--now", sweepNow}
				cmd = sweep.CursorAdvance{Source: src, To: last, PastItem: last, Writer: "load", Now: sweepNow}
			case 4:
				args = []string{"run-record", "--writer", "load", "--outcome", "partial", "--counts", `{"load": 1}`, "--timestamp", sweepNow}
				v, _ := pyjson.Decode(`{"load": 1}`)
				cmd = sweep.RunRecord{Writer: "load", Outcome: "partial", Timestamp: sweepNow, Counts: sweep.Decoded{Value: v, OK: true}}
			case 5:
				args, cmd = []string{"validate"}, sweep.Validate{}
			case 6:
				args = []string{"read"}
			default:
				args = []string{"cursor-get", "--source", src}
			}
			c, err := sweepCLI(args...)
			if err != nil {
				return err
			}
			word := strings.SplitN(c.stdout, "\n", 2)[0]
			if c.status != 0 {
				word = fmt.Sprintf("exit %d", c.status)
			}
			t.add(c, args[0]+" "+word)
			if word == "OK" && cmd != nil {
				okCalls[w] = append(okCalls[w], cmd)
				if _, isUpsert := cmd.(sweep.UpsertItem); isUpsert {
					items++
				}
			}
		}
		return nil
	})
	if err != nil {
		return Report{}, err
	}
	rep := Report{Engine: "sweep-state", Procs: cfg.Procs, Elapsed: elapsed, Latencies: t.latencies, ClientCPU: t.cpu, Answers: t.answers}
	for class := range t.answers {
		if !strings.HasSuffix(class, " OK") {
			rep.Forbidden = append(rep.Forbidden, class)
		}
	}
	// The model's file: the lease, then every worker's OK calls.
	_, st := sweep.Apply(sweep.State{Kind: sweep.Absent}, sweep.LeaseAcquire{Writer: "load", Now: sweepNow})
	for _, calls := range okCalls {
		for _, cmd := range calls {
			_, st = sweep.Apply(st, cmd)
		}
	}
	data, err := os.ReadFile(state)
	if err != nil {
		return rep, err
	}
	doc, err := yamlsubset.Parse(data)
	if err != nil {
		rep.Lost = append(rep.Lost, "the final file does not parse: "+err.Error())
		return rep, nil
	}
	if !value.EqualOrdered(doc, st.Doc) {
		rep.Lost = append(rep.Lost, diffItems(st.Doc, doc)...)
		if len(rep.Lost) == 0 {
			rep.Lost = append(rep.Lost, "the final file differs from the model's")
		}
	}
	return rep, nil
}

// diffItems names the items and sources the model has and the file lacks
// or holds differently.
func diffItems(want, got *value.Map) []string {
	var out []string
	for _, section := range []string{"items", "sources"} {
		w, _ := want.Get(section)
		g, _ := got.Get(section)
		wm, _ := w.(*value.Map)
		gm, _ := g.(*value.Map)
		if wm == nil || gm == nil {
			continue
		}
		for _, k := range wm.Keys() {
			wv, _ := wm.Get(k)
			gv, ok := gm.Get(k)
			if !ok || !value.EqualOrdered(wv, gv) {
				out = append(out, section+" "+k)
			}
		}
	}
	return out
}
