package sweepengine

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stateguard/stateguard/fuzz/internal/fuzzbytes"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

var (
	seqWriters = []string{"w1", "w2", "", "-w", "w1 "}
	seqSources = []string{"gh", "sec", "s p", "ü", "a:b", "-x", "yes", "", "gh:9"}
	seqIDs     = []string{"9", "10", "1700000000.000100", "x:y", "null", "line\nbreak", "", "--", "9 "}
	seqCursors = []string{"9", "10", "0010", "100", "99999999999999999999999", "9a", "a", "b", "-5", "",
		"1700000000.000100", "1700000000.000200", "\u0669", "\u0661\u0660", "1\u0660"}
	seqKeys = []string{"status", "sensitive", "body", "quote", "fix_ref", "verified_revision_id", "verified_at",
		"verified_merge_sha", "source", "id", "title", "x:y", "", "k\u2028", "yes"}
	seqValues = []value.Value{"closed", "ingested", "fix_pending", true, false, nil, "true", value.Int(1), value.Int(0),
		"", "PR#1", 1.5, -0.0, []value.Value{}, value.NewMap(), "sec-TEXT-", new(big.Int).Lsh(big.NewInt(1), 70)}
	seqBadJSON = []string{`{"a": 1,}`, `[1]`, `5`, `{"x": NaN}`, `{"x": 1e999}`, ``, `"s"`, `null`}
	seqCounts  = []string{`{}`, `{"n": 1, "m": [1.5]}`, `nope`, `[1]`, `{"x": NaN}`, `null`}
	seqStamps  = []string{"2026-07-02T12:00:00Z", "2026-07-02T12:00:00", "2026-07-02T17:30:00+05:30", "2026-07-02Z",
		"2026W274Z", "soon", "2026-07-02T11:59:59.999999-00:00"}
)

// seqBase anchors the generated times; no wall clock is read.
var seqBase = time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)

// FuzzSweepSequence decodes the input into a sequence of up to 24 engine
// calls (every subcommand, times around the lease's TTL, hostile ids,
// sources and cursors, objects and broken JSON, legacy files, source maps)
// and runs each through the real command line on one real file and
// through model/sweep. Oracle: after every call the status word, payload
// and file content equal the model's; on failure the decoded sequence is
// printed as argv lines.
func FuzzSweepSequence(f *testing.F) {
	for _, s := range []string{
		"", "\x00\x00\x02\x03\x04\x05\x06\x07\x08\x09",
		"\x00\x00\x0a\x02\x00\x00\x00\x03\x01\x02\x03\x05\x00\x03\x00\x01\x00\x06\x07",
		"\x00\x01\x00\x05\x02\x00\x01\x01\x04\x03\x05\x01\x02\x00\x03\x03\x01\x02\x06\x09\x05\x01\x00\x02",
		"\x03\x00\x01\x01\x02\x02\x01\x03\x00\x03\x01\x0b\x01\x07\x07\x02",
		"\x00\x02\x01\x05\x00\x00\x00\x08\x01\x03\x00\x02\x01\x06\x00\x00\x01\x00",
		strings.Repeat("\x00\x01\x02\x03\x04\x05\x06\x07\x08", 6),
		// acquire, upsert gh:9, advance gh to 10, then try to move it back to 9
		"\x00\x00\x00\x05\x00" + "\x02\x01\x00\x00\x01\x00\x05\x01\x01\x00\x00" +
			"\x03\x01\x00\x01\x00\x02\x00\x05" + "\x03\x01\x00\x00\x00\x03\x00\x05",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := fuzzbytes.New(data)
		dir := t.TempDir()
		state := filepath.Join(dir, "state.yml")
		model := sweep.State{Kind: sweep.Absent}
		var log []string
		fail := func(format string, a ...any) {
			t.Helper()
			t.Fatalf("%s\nsequence (paths relative to an empty directory):\n  %s", fmt.Sprintf(format, a...), strings.Join(log, "\n  "))
		}
		for step := 0; step < 24 && !in.Done(); step++ {
			a, cmd := seqCall(in, dir, state, model, step)
			log = append(log, strings.ReplaceAll(quoteArgv(a), dir+string(filepath.Separator), ""))
			rc, stdout, stderr := runCLI(a)
			if unreadableNow(cmd) {
				// Misuse, nothing written (D14).
				if rc != 2 || stdout != "" {
					fail("step %d: exit %d stdout %q; want misuse for a --now that is not a time", step, rc, stdout)
				}
				if err := checkFile(state, model, nil); err != nil {
					fail("step %d: %v", step, err)
				}
				continue
			}
			res, next := sweep.Apply(model, cmd)
			if rc != 0 || stdout != answer(res) {
				fail("step %d: exit %d stdout %q stderr %q; model %q", step, rc, stdout, stderr, answer(res))
			}
			if err := checkFile(state, next, nil); err != nil {
				fail("step %d: %v", step, err)
			}
			model = next
		}
	})
}

// seqCall decodes one call: its argv and the model's command.
func seqCall(in *fuzzbytes.Stream, dir, state string, model sweep.State, step int) ([]string, sweep.Command) {
	switch in.Intn(9) {
	case 0:
		w, now := fuzzbytes.Pick(in, seqWriters), seqNow(in, model)
		cmd := sweep.LeaseAcquire{Writer: w, Now: now}
		a := argv("lease-acquire", state, flag("writer", w), flag("now", now))
		if ttl := in.Intn(5); ttl > 0 {
			n := []int64{0, 1, 5, 60}[ttl-1]
			cmd.TTLMinutes = big.NewInt(n)
			a = append(a, flag("ttl-minutes", strconv.FormatInt(n, 10))...)
		}
		return a, cmd
	case 1:
		w := seqWriter(in, model)
		return argv("lease-release", state, flag("writer", w)), sweep.LeaseRelease{Writer: w}
	case 2:
		w, src, id, now := seqWriter(in, model), fuzzbytes.Pick(in, seqSources), fuzzbytes.Pick(in, seqIDs), seqNow(in, model)
		var text string
		var item sweep.Decoded
		if in.Intn(6) == 0 {
			text = fuzzbytes.Pick(in, seqBadJSON)
			item = decodeJSON(text)
		} else {
			obj := value.NewMap()
			for i, n := 0, in.Intn(5); i < n; i++ {
				v := fuzzbytes.Pick(in, seqValues)
				if v == "sec-TEXT-" {
					v = fmt.Sprintf("sec-TEXT-%d", step)
				}
				obj.Set(fuzzbytes.Pick(in, seqKeys), value.Clone(v))
			}
			text, item = string(pyjson.Encode(obj)), sweep.Decoded{Value: obj, OK: true}
		}
		return argv("upsert-item", state, flag("source", src), flag("id", id), flag("json", text), flag("writer", w), flag("now", now)),
			sweep.UpsertItem{Source: src, ID: id, Writer: w, Now: now, Item: item}
	case 3:
		w, src, to, past, now := seqWriter(in, model), fuzzbytes.Pick(in, seqSources), fuzzbytes.Pick(in, seqCursors), fuzzbytes.Pick(in, seqIDs), seqNow(in, model)
		return argv("cursor-advance", state, flag("source", src), flag("to", to), flag("past-item", past), flag("writer", w), flag("now", now)),
			sweep.CursorAdvance{Source: src, To: to, PastItem: past, Writer: w, Now: now}
	case 4:
		src := fuzzbytes.Pick(in, seqSources)
		return argv("cursor-get", state, flag("source", src)), sweep.CursorGet{Source: src}
	case 5:
		return argv("read", state), sweep.Read{}
	case 6:
		return argv("validate", state), sweep.Validate{}
	case 7:
		w, outcome := seqWriter(in, model), fuzzbytes.Pick(in, []string{"completed", "aborted-locked", "partial", "failed"})
		counts, ts := fuzzbytes.Pick(in, seqCounts), fuzzbytes.Pick(in, seqStamps)
		return argv("run-record", state, flag("writer", w), flag("outcome", outcome), flag("counts", counts), flag("timestamp", ts)),
			sweep.RunRecord{Writer: w, Outcome: outcome, Timestamp: ts, Counts: decodeJSON(counts)}
	default:
		file := filepath.Join(dir, fmt.Sprintf("legacy-%d.json", step))
		legacy := seqLegacy(in)
		cmd := sweep.ImportLegacy{}
		if legacy != nil {
			if err := os.WriteFile(file, legacy, 0o600); err != nil {
				panic(err)
			}
			cmd.Legacy = decodeLegacy(legacy)
		}
		a := argv("import-legacy", state, flag("file", file))
		if in.Bool() {
			sm := fuzzbytes.Pick(in, []string{`{"C42": "gh", "C9": "sec"}`, `{"C42": null}`, `["C42"]`, `nope`})
			a = append(a, flag("source-map", sm)...)
			cmd.SourceMap = decodeJSON(sm)
		}
		return a, cmd
	}
}

// seqWriter is usually the model's lease holder, so that writes succeed.
func seqWriter(in *fuzzbytes.Stream, model sweep.State) string {
	if h := holder(model); h != "" && in.Intn(4) > 0 {
		return h
	}
	return fuzzbytes.Pick(in, seqWriters)
}

func holder(model sweep.State) string {
	if model.Kind != sweep.Parsed {
		return ""
	}
	l, _ := model.Doc.Get("lease")
	lease, _ := l.(*value.Map)
	if lease == nil {
		return ""
	}
	w, _ := lease.Get("writer")
	s, _ := w.(string)
	return s
}

// seqNow is a --now: often the lease's expiry exactly or 1 µs either side,
// else minutes after the base time, in assorted spellings.
func seqNow(in *fuzzbytes.Stream, model sweep.State) string {
	at := seqBase.Add(time.Duration(in.Intn(181)) * time.Minute)
	if expiry, ok := leaseExpiry(model); ok && in.Bool() {
		at = expiry.Add(time.Duration([]int{-1000, -1, 0, 1, 1000}[in.Intn(5)]) * time.Microsecond)
	}
	frac := ""
	if us := at.Nanosecond() / 1000; us != 0 {
		frac = fmt.Sprintf(".%06d", us)
	}
	switch in.Intn(6) {
	case 0:
		return at.Format("2006-01-02T15:04:05") + frac
	case 1:
		return at.Format("2006-01-02T15:04:05") + frac + "+00:00"
	case 2:
		return at.In(time.FixedZone("", 5*3600+30*60)).Format("2006-01-02 15:04:05") + frac + "+05:30"
	case 3:
		return "later"
	case 4:
		return at.Format("20060102T150405") + strings.Replace(frac, ".", ",", 1) + "Z"
	default:
		return at.Format("2006-01-02T15:04:05") + frac + "Z"
	}
}

// leaseExpiry is the model's lease timestamp plus its TTL, when both read.
func leaseExpiry(model sweep.State) (time.Time, bool) {
	if model.Kind != sweep.Parsed {
		return time.Time{}, false
	}
	l, _ := model.Doc.Get("lease")
	lease, _ := l.(*value.Map)
	if lease == nil {
		return time.Time{}, false
	}
	ts, _ := lease.Get("timestamp")
	text, _ := ts.(string)
	at, ok := sweep.ParseTime(text)
	if !ok {
		return time.Time{}, false
	}
	ttlV, _ := lease.Get("ttl_minutes")
	ttl, ok := sweep.PyInt(ttlV)
	if !ok || !ttl.IsInt64() || ttl.Int64() > 10000 || ttl.Int64() < -10000 {
		ttl = big.NewInt(60)
	}
	return time.UnixMicro(int64(at) - epochMicros).UTC().Add(time.Duration(ttl.Int64()) * time.Minute), true
}

// seqLegacy is a legacy file's bytes (nil: no file).
func seqLegacy(in *fuzzbytes.Stream) []byte {
	switch in.Intn(5) {
	case 0:
		return nil
	case 1:
		return []byte(`{"channels": {"C42": {"last_processed_ts": "1700000000.000300"}, "gh": {"cursor": "8"}}, "items": {"C42:5": {"channel": "C42", "status": "closed"}}}`)
	case 2:
		return []byte(`{"items": [{"id": "a1", "source": "sec", "title": "t"}, {"id": 5}, {"id": ""}]}`)
	case 3:
		return []byte("channels:\n  C9:\n    cursor: \"11\"\nitems:\n  \"gh:9\":\n    status: \"ingested\"\n")
	default:
		return []byte(in.Text(40))
	}
}

// unreadableNow reports a command that stamps the lease with a --now the
// staleness check cannot read, which the command line refuses (D14).
func unreadableNow(cmd sweep.Command) bool {
	var now string
	switch c := cmd.(type) {
	case sweep.LeaseAcquire:
		now = c.Now
	case sweep.UpsertItem:
		now = c.Now
	case sweep.CursorAdvance:
		now = c.Now
	default:
		return false
	}
	_, ok := sweep.ParseTime(now)
	return now != "" && !ok
}
