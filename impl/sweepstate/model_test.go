package sweepstate_test

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/stateguard/stateguard/internal/cli/sweepcli"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// TestEngineMatchesModel drives the real engine, through its command line,
// and the executable model (model/sweep) with the same random sequences of
// every subcommand, plus hand edits of the file, and compares after every
// step: the status word and payload bytes, and the file's parsed content.
// On failure it prints the op log as argv lines, which replay in order
// against an empty directory (paths are relative to it).
//
// Default: rapid's 100 checks. Deeper: go test -run EngineMatchesModel
// -rapid.checks=5000 -rapid.steps=60 ./impl/sweepstate/
func TestEngineMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := &machine{dir: t.TempDir()}
		m.state = filepath.Join(m.dir, "sub", "state.yml")
		actions := rapid.StateMachineActions(m)
		// Double weights: writes with a held lease, cursor moves (twice
		// needed before one can go backwards) and validate (which judges
		// closed items) must come often enough to meet each other.
		actions["UpsertItem again"] = m.UpsertItem
		actions["CursorAdvance again"] = m.CursorAdvance
		actions["Validate again"] = m.Validate
		actions["LeaseAcquire again"] = m.LeaseAcquire
		rt.Repeat(actions)
	})
}

// machine holds the model's view of the file next to a real directory.
type machine struct {
	dir, state string
	// model is what the model says the file holds.
	model sweep.State
	// raw is the file's bytes when the model cannot describe them (blank
	// or unreadable); they must never change.
	raw []byte
	// log is the replayable op log, one line per op.
	log []string
	// secrets are body/quote texts the model redacted: never on disk.
	secrets []string
	// cursors are the last cursors seen per source since the file was last
	// replaced by hand; a cursor never moves backwards.
	cursors map[string]string
	n       int // op counter, makes generated texts unique
}

var (
	writers  = []string{"w1", "w2", "w3"}
	sources  = []string{"src-1", "gh:issues", "yes", "s p", "ü-ch", "true", "C42"}
	itemIDs  = []string{"1", "9", "10", "a b", "x:y", "ñ", "null", "off", "line\nbreak", "1700000000.000100"}
	statuses = []string{"ingested", "ack_deferred", "acknowledged", "needs_download", "needs_analysis",
		"manual_stuck", "analyzed", "in_plan", "fix_pending", "closed", "closed", "closed", "source_gone", "mystery"}
	outcomes = []string{"completed", "aborted-locked", "partial", "failed"}
)

// baseTime anchors generated lease times; no wall clock is read.
var baseTime = time.Date(2026, 7, 2, 12, 0, 0, 0, time.UTC)

// epochMicros is 1970-01-01 in the model's microseconds since year 1.
const epochMicros = 62135596800 * 1_000_000

// Check compares the file with the model and checks the invariants.
func (m *machine) Check(t *rapid.T) {
	b, err := os.ReadFile(m.state)
	exists := err == nil
	switch m.model.Kind {
	case sweep.Absent:
		if exists {
			m.fail(t, "model says no file, but the engine left %q", b)
		}
		return
	case sweep.Blank, sweep.Unreadable:
		if !bytes.Equal(b, m.raw) {
			m.fail(t, "file bytes changed: got %q, want %q", b, m.raw)
		}
		return
	}
	if !exists {
		m.fail(t, "model has a document, file is missing: %v", err)
	}
	doc, err := yamlsubset.Parse(b)
	if err != nil {
		m.fail(t, "file does not parse (%v):\n%s", err, b)
	}
	if !value.EqualOrdered(doc, m.model.Doc) {
		m.fail(t, "file content\n got %s\nwant %s\nfile:\n%s", pyjson.Encode(doc), pyjson.Encode(m.model.Doc), b)
	}
	for _, s := range m.secrets {
		if bytes.Contains(b, []byte(s)) {
			m.fail(t, "redacted text %q reached the disk", s)
		}
	}
	if fi, err := os.Stat(m.state); err == nil && platformtest.HasPOSIXModes && fi.Mode().Perm() != 0o600 {
		m.fail(t, "file mode %v, want 0600", fi.Mode().Perm())
	}
	if m.cursors == nil {
		m.cursors = map[string]string{}
	}
	if srcs, ok := mustMap(doc, "sources"); ok {
		for _, k := range srcs.Keys() {
			entry, _ := mustMap(srcs, k)
			if entry == nil {
				continue
			}
			c, _ := entry.Get("cursor")
			if c == nil {
				continue
			}
			// Both sides order a non-string cursor (import-legacy stores
			// 1.5 or false as it is) by its Python str().
			cur := sweep.PyStr(c)
			if old, seen := m.cursors[k]; seen && sweep.CursorLess(cur, old) {
				m.fail(t, "cursor of %q moved backwards from %q to %q", k, old, cur)
			}
			m.cursors[k] = cur
		}
	}
}

func mustMap(m *value.Map, k string) (*value.Map, bool) {
	v, _ := m.Get(k)
	sub, ok := v.(*value.Map)
	return sub, ok
}

// fail reports a mismatch with the replayable op log.
func (m *machine) fail(t *rapid.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s\nop log (cwd = an empty directory):\n  %s", fmt.Sprintf(format, args...), strings.Join(m.log, "\n  "))
}

// run executes argv with the engine and cmd with the model and compares.
func (m *machine) run(t *rapid.T, cmd sweep.Command, args ...string) {
	t.Helper()
	argv := append([]string{args[0], "--state", m.state}, args[1:]...)
	m.log = append(m.log, quoteArgv(m.relative(argv)))
	var stdout, stderr bytes.Buffer
	code := sweepcli.Main(argv, &stdout, &stderr)
	res, next := sweep.Apply(m.model, cmd)
	want := res.Word + "\n"
	if res.Payload != nil {
		want += string(pyjson.Encode(res.Payload)) + "\n"
	}
	if code != 0 || stdout.String() != want {
		m.fail(t, "engine answered exit %d stdout %q (stderr %q), model %q", code, stdout.String(), stderr.String(), want)
	}
	m.model = next
}

// relative shows paths inside the test directory relative to it.
func (m *machine) relative(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = strings.ReplaceAll(a, m.dir+string(filepath.Separator), "")
	}
	return out
}

func quoteArgv(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		parts[i] = strconv.Quote(a)
	}
	return strings.Join(parts, " ")
}

// flag renders --name value, or --name=value when value starts with '-'
// (argparse would read it as an option otherwise).
func flag(name, val string) []string {
	if strings.HasPrefix(val, "-") {
		return []string{"--" + name + "=" + val}
	}
	return []string{"--" + name, val}
}

func args(sub string, flags ...[]string) []string {
	out := []string{sub}
	for _, f := range flags {
		out = append(out, f...)
	}
	return out
}

// holder is the model's current lease writer, if any.
func (m *machine) holder() (string, *value.Map) {
	if m.model.Kind != sweep.Parsed {
		return "", nil
	}
	l, _ := mustMap(m.model.Doc, "lease")
	if l == nil {
		return "", nil
	}
	w, _ := l.Get("writer")
	s, _ := w.(string)
	return s, l
}

// writer picks the lease holder most of the time, so owned writes succeed.
func (m *machine) writer(t *rapid.T) string {
	if h, _ := m.holder(); h != "" && rapid.IntRange(0, 3).Draw(t, "holder?") > 0 {
		return h
	}
	return rapid.SampledFrom(writers).Draw(t, "writer")
}

// now draws a --now value, often straddling the current lease's TTL
// exactly (timestamp + ttl*60 s, and 1 µs either side), written in
// assorted offsets and forms.
func (m *machine) now(t *rapid.T) string {
	at := baseTime.Add(time.Duration(rapid.IntRange(0, 180).Draw(t, "minutes")) * time.Minute)
	if _, l := m.holder(); l != nil && rapid.Bool().Draw(t, "near ttl?") {
		ts, _ := l.Get("timestamp")
		tsText, _ := ts.(string)
		if stamped, ok := sweep.ParseTime(tsText); ok {
			ttlV, _ := l.Get("ttl_minutes")
			ttl, ok := sweep.PyInt(ttlV)
			if !ok || !ttl.IsInt64() || ttl.Int64() > 100000 || ttl.Int64() < -100000 {
				ttl = big.NewInt(60)
			}
			delta := rapid.SampledFrom([]int64{-1_000_000, -1, 0, 0, 1, 1, 1_000_000}).Draw(t, "delta µs")
			at = time.UnixMicro(int64(stamped) - epochMicros + ttl.Int64()*60_000_000 + delta).UTC()
		}
	}
	return formatTime(at, rapid.IntRange(0, 7).Draw(t, "time form"))
}

func formatTime(at time.Time, form int) string {
	frac := ""
	if us := at.Nanosecond() / 1000; us != 0 {
		frac = fmt.Sprintf(".%06d", us)
	}
	switch form {
	case 0:
		return at.Format("2006-01-02T15:04:05") + frac + "Z"
	case 1:
		return at.Format("2006-01-02T15:04:05") + frac + "+00:00"
	case 2:
		return at.Format("2006-01-02T15:04:05") + frac // naive is UTC
	case 3:
		l := at.In(time.FixedZone("", 5*3600+30*60))
		return l.Format("2006-01-02T15:04:05") + frac + "+05:30"
	case 4:
		l := at.In(time.FixedZone("", -7*3600))
		return l.Format("2006-01-02 15:04:05") + frac + "-0700"
	case 6:
		// Date only with Z: the reference's Z-to-+00:00 replacement makes
		// it midnight UTC, although fromisoformat alone refuses it.
		return at.Format("2006-01-02") + "Z"
	case 7:
		// ISO week date with Z, extended or basic: midnight UTC likewise.
		y, w := at.ISOWeek()
		d := (int(at.Weekday())+6)%7 + 1
		if at.Minute()%2 == 0 {
			return fmt.Sprintf("%04d-W%02d-%dZ", y, w, d)
		}
		return fmt.Sprintf("%04dW%02d%dZ", y, w, d)
	default:
		return at.Format("20060102T150405") + strings.Replace(frac, ".", ",", 1) + "Z"
	}
}

// LeaseAcquire takes, re-stamps or reclaims the lease.
func (m *machine) LeaseAcquire(t *rapid.T) {
	w := rapid.SampledFrom(writers).Draw(t, "writer")
	now := m.now(t)
	cmd := sweep.LeaseAcquire{Writer: w, Now: now}
	a := args("lease-acquire", flag("writer", w), flag("now", now))
	if ttl := rapid.SampledFrom([]int{-1, 0, 1, 5, 60}).Draw(t, "ttl"); ttl >= 0 {
		cmd.TTLMinutes = big.NewInt(int64(ttl))
		a = append(a, flag("ttl-minutes", strconv.Itoa(ttl))...)
	}
	m.run(t, cmd, a...)
}

// LeaseRelease drops the lease of a writer.
func (m *machine) LeaseRelease(t *rapid.T) {
	w := m.writer(t)
	m.run(t, sweep.LeaseRelease{Writer: w}, args("lease-release", flag("writer", w))...)
}

// UpsertItem merges a random JSON object (or invalid JSON) into an item.
func (m *machine) UpsertItem(t *rapid.T) {
	m.n++
	w, src, id := m.writer(t), rapid.SampledFrom(sources).Draw(t, "source"), rapid.SampledFrom(itemIDs).Draw(t, "id")
	if known := m.knownItems(); len(known) > 0 && rapid.IntRange(0, 2).Draw(t, "known item?") == 0 {
		k := rapid.SampledFrom(known).Draw(t, "known item")
		src, id = k[0], k[1]
	} else if flagged := m.flaggedSources(); len(flagged) > 0 && rapid.IntRange(0, 2).Draw(t, "flagged source?") > 0 {
		src = rapid.SampledFrom(flagged).Draw(t, "flagged source")
	}
	now := m.now(t)
	var text string
	var item sweep.Decoded
	if rapid.IntRange(0, 9).Draw(t, "invalid json?") == 0 {
		bad := rapid.SampledFrom(badItemJSON).Draw(t, "bad json")
		text, item = bad.text, bad.decoded
	} else {
		// The model gets the value itself, the engine its JSON text.
		obj := m.itemObject(t)
		text, item = string(pyjson.Encode(obj)), sweep.Decoded{Value: obj, OK: true}
	}
	v := item.Value
	cmd := sweep.UpsertItem{Source: src, ID: id, Writer: w, Now: now, Item: item}
	before := m.model
	m.run(t, cmd, args("upsert-item", flag("source", src), flag("id", id), flag("json", text), flag("writer", w), flag("now", now))...)
	m.noteRedaction(before, src, id, v)
}

// jsonSample is a JSON argument with its decoding written by hand (OK
// false: refused, as invalid or non-finite), independent of the codec.
type jsonSample struct {
	text    string
	decoded sweep.Decoded
}

func refused(text string) jsonSample { return jsonSample{text, sweep.Decoded{}} }

func decodesTo(text string, v value.Value) jsonSample {
	return jsonSample{text, sweep.Decoded{Value: v, OK: true}}
}

// badItemJSON are --json texts that are no usable item: invalid or
// non-finite JSON, or JSON that is not an object.
var badItemJSON = []jsonSample{
	refused(`{"a": 1,}`), decodesTo(`[1, 2]`, []value.Value{value.Int(1), value.Int(2)}),
	decodesTo(`5`, value.Int(5)), decodesTo(`"s"`, "s"),
	refused(`{"x": NaN}`), refused(`{"x": 1e999}`), refused(`{"x": -Infinity}`), refused(``),
}

// oddCounts are --counts texts that are not a JSON object.
var oddCounts = []jsonSample{
	refused("nope"), refused("{"), decodesTo(`[1, 2]`, []value.Value{value.Int(1), value.Int(2)}),
	decodesTo(`5`, value.Int(5)), decodesTo(`"text"`, "text"), decodesTo(`null`, nil), refused(`{"x": NaN}`),
}

// noteRedaction records body/quote texts that the model dropped.
func (m *machine) noteRedaction(before sweep.State, src, id string, in value.Value) {
	obj, ok := in.(*value.Map)
	if !ok || m.model.Kind != sweep.Parsed || before.Kind == sweep.Parsed && value.EqualOrdered(before.Doc, m.model.Doc) {
		return
	}
	items, _ := mustMap(m.model.Doc, "items")
	item, _ := mustMap(items, src+":"+id)
	if item == nil || item.Has("body") || item.Has("quote") {
		return
	}
	for _, k := range []string{"body", "quote"} {
		if s, ok := obj.Get(k); ok {
			if text, ok := s.(string); ok && strings.HasPrefix(text, "secret-") {
				// The ASCII marker part: it appears verbatim if written.
				marker, _, _ := strings.Cut(text, " ")
				marker, _, _ = strings.Cut(marker, "\n")
				m.secrets = append(m.secrets, marker)
			}
		}
	}
}

// itemObject draws an item: known fields, sensitive flags of every kind,
// evidence or none, and awkward values.
func (m *machine) itemObject(t *rapid.T) *value.Map {
	o := value.NewMap()
	if rapid.Bool().Draw(t, "status?") {
		o.Set("status", rapid.SampledFrom(statuses).Draw(t, "status"))
	}
	switch rapid.IntRange(0, 4).Draw(t, "sensitive") {
	case 1:
		o.Set("sensitive", true)
	case 2:
		o.Set("sensitive", rapid.SampledFrom([]value.Value{"true", value.Int(1), false, nil}).Draw(t, "not-true"))
	}
	if rapid.IntRange(0, 3).Draw(t, "body?") > 0 {
		o.Set("body", fmt.Sprintf("secret-%d-body ✓ \U0001F600", m.n))
	}
	if rapid.IntRange(0, 3).Draw(t, "quote?") == 0 {
		o.Set("quote", fmt.Sprintf("secret-%d-quote \n\u2028", m.n))
	}
	if rapid.IntRange(0, 2).Draw(t, "closed with partial evidence?") == 0 {
		// Closed, with some but not all of the three evidence fields
		// truthy: the others absent or falsy. validate must downgrade it.
		o.Set("status", "closed")
		fields := []string{"fix_ref", "verified_revision_id", "verified_at"}
		missing := rapid.IntRange(0, 2).Draw(t, "missing evidence")
		for i, f := range fields {
			switch {
			case i != missing:
				o.Set(f, rapid.SampledFrom(truthyEvidence).Draw(t, f))
			case rapid.Bool().Draw(t, "falsy rather than absent?"):
				o.Set(f, rapid.SampledFrom(falsyEvidence).Draw(t, f))
			}
		}
	} else {
		for _, f := range []string{"fix_ref", "verified_revision_id", "verified_at", "verified_merge_sha"} {
			if rapid.IntRange(0, 2).Draw(t, f+"?") == 0 {
				o.Set(f, rapid.SampledFrom(evidenceValues).Draw(t, f))
			}
		}
	}
	for i, n := 0, rapid.IntRange(0, 3).Draw(t, "extra keys"); i < n; i++ {
		o.Set(rapid.SampledFrom(extraKeys).Draw(t, "key"), awkwardValue(t, 2))
	}
	return o
}

// truthyEvidence and falsyEvidence split evidence values by Python truth.
var (
	truthyEvidence = []value.Value{"PR#7", "rev9", "2026-07-01T00:00:00Z", "0", []value.Value{value.Int(0)}, value.Int(3)}
	falsyEvidence  = []value.Value{"", nil, false, value.Int(0), 0.0, []value.Value{}, value.NewMap()}
)

var evidenceValues = []value.Value{"PR#7", "rev9", "2026-07-01T00:00:00Z", "0", "", nil, false, value.Int(0), 0.0,
	math.Copysign(0, -1), []value.Value{}, value.NewMap(), []value.Value{value.Int(0)}}

var extraKeys = []string{"title", "url", "source", "id", "x:y", "yes", "n", "ü", "a b", "k\u2028", "nested", "Z", "_a.b-c", "", "line\nkey", "\u007f"}

var awkwardStrings = []string{"", "plain", "ünï", "\U0001F600", "\u007f\u0085\u2028\u2029\ufffe", "tab\tnl\ncr\r\x01\x1f", `quote " back \ slash`, "yes", "null", "0x10", " lead", "#hash", "- dash"}

// awkwardValue draws JSON values that stress the codecs: unicode, big
// integers, float spellings, empty containers, nesting.
func awkwardValue(t *rapid.T, depth int) value.Value {
	kind := rapid.IntRange(0, 9).Draw(t, "value kind")
	if depth == 0 && kind >= 8 {
		kind = 0
	}
	switch kind {
	case 0:
		return rapid.SampledFrom(awkwardStrings).Draw(t, "string")
	case 1:
		big1 := new(big.Int).Lsh(big.NewInt(1), 70)
		return rapid.SampledFrom([]value.Value{value.Int(0), value.Int(-7), big1, new(big.Int).Neg(big1), value.Int(math.MaxInt64)}).Draw(t, "int")
	case 2:
		return rapid.SampledFrom([]float64{math.Copysign(0, -1), 1e16, 1e-05, 0.1, 123456789.0, 1.5, -2.5e-300, 1e300}).Draw(t, "float")
	case 3:
		return rapid.SampledFrom([]value.Value{true, false, nil}).Draw(t, "constant")
	case 4:
		return []value.Value{}
	case 5:
		return value.NewMap()
	case 6:
		return "s" + strconv.Itoa(rapid.IntRange(0, 99).Draw(t, "n"))
	case 7:
		return rapid.Float64().Draw(t, "any float")
	case 8:
		n := rapid.IntRange(1, 3).Draw(t, "list len")
		l := make([]value.Value, n)
		for i := range l {
			l[i] = awkwardValue(t, depth-1)
		}
		return l
	default:
		mp := value.NewMap()
		for i, n := 0, rapid.IntRange(1, 3).Draw(t, "map len"); i < n; i++ {
			mp.Set(rapid.SampledFrom(extraKeys).Draw(t, "key"), awkwardValue(t, depth-1))
		}
		return mp
	}
}

// CursorAdvance moves a cursor, past a known or unknown item.
func (m *machine) CursorAdvance(t *rapid.T) {
	w, src := m.writer(t), rapid.SampledFrom(sources).Draw(t, "source")
	past := rapid.SampledFrom(itemIDs).Draw(t, "past item")
	// Past an item that exists most of the time: otherwise the call is
	// REFUSED before the cursor order is ever compared.
	if known := m.knownItems(); len(known) > 0 && rapid.IntRange(0, 3).Draw(t, "known item?") > 0 {
		k := rapid.SampledFrom(known).Draw(t, "known item")
		src, past = k[0], k[1]
	}
	to := rapid.SampledFrom([]string{"9", "10", "0010", "100", "99999999999999999999999", "10a", "9a",
		"1700000000.000100", "1700000000.000200", "a", "b", "é", "-5", "0",
		"\u0669", "\u0661\u0660", "\U0001D7D7", "1\u0660", // Arabic-Indic 9, 10; mathematical 9; "10" mixed
		"9\u00b2", "\u2460", "1\u2080"}).Draw(t, "to") // D11: isdigit but not decimal (9², ①, 1₀)
	if cur, ok := m.cursorOf(src); ok && rapid.Bool().Draw(t, "relative to the cursor?") {
		// Backwards ("0" is below every other decimal cursor), the same
		// cursor again, or the cursor with a digit appended.
		to = rapid.SampledFrom([]string{"0", "-5", cur, cur + "0"}).Draw(t, "to near cursor")
	}
	now := m.now(t)
	m.run(t, sweep.CursorAdvance{Source: src, To: to, PastItem: past, Writer: w, Now: now},
		args("cursor-advance", flag("source", src), flag("to", to), flag("past-item", past), flag("writer", w), flag("now", now))...)
}

// CursorGet reads a cursor.
func (m *machine) CursorGet(t *rapid.T) {
	src := rapid.SampledFrom(sources).Draw(t, "source")
	m.run(t, sweep.CursorGet{Source: src}, args("cursor-get", flag("source", src))...)
}

// Read reads the whole document.
func (m *machine) Read(t *rapid.T) {
	m.run(t, sweep.Read{}, "read")
}

// Validate downgrades closed items without evidence.
func (m *machine) Validate(t *rapid.T) {
	m.run(t, sweep.Validate{}, "validate")
}

// RunRecord records a run outcome with valid or invalid counts.
func (m *machine) RunRecord(t *rapid.T) {
	w, outcome := rapid.SampledFrom(writers).Draw(t, "writer"), rapid.SampledFrom(outcomes).Draw(t, "outcome")
	var counts string
	var decoded sweep.Decoded
	switch rapid.IntRange(0, 3).Draw(t, "counts kind") {
	case 0:
		odd := rapid.SampledFrom(oddCounts).Draw(t, "odd counts")
		counts, decoded = odd.text, odd.decoded
	default:
		c := value.NewMap()
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "counts len"); i < n; i++ {
			c.Set(rapid.SampledFrom([]string{"ingested", "closed", "by_source", "errors"}).Draw(t, "count"), awkwardValue(t, 1))
		}
		counts, decoded = string(pyjson.Encode(c)), sweep.Decoded{Value: c, OK: true}
	}
	ts := rapid.SampledFrom([]string{"2026-07-02T12:00:00Z", "2026-07-02T12:10:00+02:00", "whenever"}).Draw(t, "timestamp")
	m.run(t, sweep.RunRecord{Writer: w, Outcome: outcome, Timestamp: ts, Counts: decoded},
		args("run-record", flag("writer", w), flag("outcome", outcome), flag("counts", counts), flag("timestamp", ts))...)
}

// ImportLegacy imports a generated legacy file (JSON or YAML subset, dict
// or list items), a missing one, with or without a source map.
func (m *machine) ImportLegacy(t *rapid.T) {
	m.n++
	name := fmt.Sprintf("legacy-%d.json", m.n)
	path := filepath.Join(m.dir, name)
	var legacy sweep.Decoded
	if rapid.IntRange(0, 5).Draw(t, "legacy missing?") > 0 {
		doc := legacyDoc(t)
		var b []byte
		if rapid.IntRange(0, 3).Draw(t, "yaml?") == 0 {
			b = yamlsubset.Emit(doc)
		} else {
			b = pyjson.Encode(doc)
		}
		m.writeFile(t, path, b)
		legacy = decodeLegacy(b)
	}
	cmd := sweep.ImportLegacy{Legacy: legacy}
	a := args("import-legacy", flag("file", path))
	switch rapid.IntRange(0, 3).Draw(t, "source map") {
	case 3:
		sm := `["C42"]`
		cmd.SourceMap = sweep.Decoded{Value: []value.Value{"C42"}, OK: true}
		a = append(a, flag("source-map", sm)...)
	case 1:
		sm := `{"C42": "slack:C42", "C111": "gh-issues", "C9": null, "C7": 5}`
		v := value.NewMap()
		v.Set("C42", "slack:C42")
		v.Set("C111", "gh-issues")
		v.Set("C9", nil)
		v.Set("C7", value.Int(5))
		cmd.SourceMap = sweep.Decoded{Value: v, OK: true}
		a = append(a, flag("source-map", sm)...)
	case 2:
		a = append(a, flag("source-map", "not json")...)
	}
	m.run(t, cmd, a...)
}

func legacyDoc(t *rapid.T) *value.Map {
	doc := value.NewMap()
	if rapid.Bool().Draw(t, "channels?") {
		ch := value.NewMap()
		for _, id := range []string{"C42", "C111", "C9", "C7", "src-1"} {
			if !rapid.Bool().Draw(t, "channel "+id) {
				continue
			}
			e := value.NewMap()
			cursors := []value.Value{"1700000000.000100", "1700000000.000300", "10", "9", "abc", "", nil, value.Int(250), 1.5,
				"9\u00b2", false, value.Int(0)}
			if rapid.Bool().Draw(t, "lpts?") {
				e.Set("last_processed_ts", rapid.SampledFrom(cursors).Draw(t, "lpts"))
			}
			if rapid.Bool().Draw(t, "cursor?") {
				e.Set("cursor", rapid.SampledFrom(cursors).Draw(t, "cursor"))
			}
			ch.Set(id, e)
		}
		doc.Set("channels", ch)
	}
	fields := func() *value.Map {
		f := value.NewMap()
		for _, k := range []string{"status", "source", "channel", "title", "url", "extra"} {
			if rapid.Bool().Draw(t, k+"?") {
				f.Set(k, rapid.SampledFrom([]value.Value{"ingested", "C42", "t ✓", nil, value.Int(3)}).Draw(t, k))
			}
		}
		return f
	}
	switch rapid.IntRange(0, 2).Draw(t, "items form") {
	case 1:
		items := value.NewMap()
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "n items"); i < n; i++ {
			items.Set(rapid.SampledFrom([]string{"C42:9", "src-1:1", "bare", ""}).Draw(t, "legacy id"), fields())
		}
		doc.Set("items", items)
	case 2:
		var items []value.Value
		for i, n := 0, rapid.IntRange(0, 3).Draw(t, "n items"); i < n; i++ {
			f := fields()
			id := rapid.SampledFrom([]value.Value{"a1", value.Int(5), 1.5, true, value.Int(0), "", nil, "src-1:1"}).Draw(t, "list id")
			f.Set("id", id)
			items = append(items, f)
		}
		doc.Set("items", items)
	}
	return doc
}

// decodeLegacy reads a legacy file as JSON, or else as the YAML subset.
func decodeLegacy(b []byte) sweep.Decoded {
	if v, err := pyjson.Decode(string(b)); err == nil {
		return sweep.Decoded{Value: v, OK: true}
	}
	if doc, err := yamlsubset.Parse(b); err == nil {
		return sweep.Decoded{Value: doc, OK: true}
	}
	return sweep.Decoded{}
}

// handEdit is a state file written by hand, with what the YAML subset
// makes of it and what `read` answers, both written down by hand rather
// than derived from the codec, so the codec's acceptance is checked too.
type handEdit struct {
	text string
	// kind: Blank (whitespace only), Unreadable (the subset refuses the
	// text) or Parsed (a mapping, with or without schema_version).
	kind sweep.FileKind
	// read is the full stdout of `read` on this file.
	read string
}

// longTTL is a TTL of 4301 digits: beyond Python 3.11's int() digit limit,
// so it falls back to 60.
var longTTL = strings.Repeat("1", 4301)

var handEdits = []handEdit{
	{"schema_version: 1\nthis line has no colon\n", sweep.Unreadable, "CORRUPT\n"},
	{"sources: {}\nitems: {}\n", sweep.Parsed, "CORRUPT\n"}, // no schema_version
	{"  \n\n", sweep.Blank, "NO-STATE\n"},
	{"\x1f\u3000\x1c\n", sweep.Blank, "NO-STATE\n"}, // str.strip() removes U+001C..U+001F too
	{"schema_version: 1\nitems: 5\n", sweep.Parsed, "ERROR\n"},
	{"schema_version: 2\nlease:\n  writer: \"w2\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: \"30\"\nfuture: {\"k\": [1, 2]}\n", sweep.Parsed,
		"OK\n" + `{"schema_version": 2, "lease": {"writer": "w2", "timestamp": "2026-07-02T12:00:00Z", "ttl_minutes": "30"}, "future": {"k": [1, 2]}, "sources": {}, "items": {}}` + "\n"},
	{"schema_version: 1\nlease:\n  writer: \"w2\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: \"\u0663\u0660\"\n", sweep.Parsed,
		"OK\n" + `{"schema_version": 1, "lease": {"writer": "w2", "timestamp": "2026-07-02T12:00:00Z", "ttl_minutes": "\u0663\u0660"}, "sources": {}, "items": {}}` + "\n"},
	{"schema_version: 1\nlease:\n  writer: \"w2\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: \"" + longTTL + "\"\n", sweep.Parsed,
		"OK\n" + `{"schema_version": 1, "lease": {"writer": "w2", "timestamp": "2026-07-02T12:00:00Z", "ttl_minutes": "` + longTTL + `"}, "sources": {}, "items": {}}` + "\n"},
	{"schema_version: 1\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00+05:30\"\n  ttl_minutes: 1.9\n  note: \"x\"\nsources:\n  src-1:\n    sensitive: true\n    cursor: \"10\"\nitems:\n  \"src-1:1\":\n    status: \"closed\"\n    fix_ref: \"PR#1\"\n    verified_at: \"2026-07-01\"\n    verified_merge_sha: \"abc\"\n    body: \"old text\"\n", sweep.Parsed,
		// verified_merge_sha moves to verified_revision_id on load (last).
		"OK\n" + `{"schema_version": 1, "lease": {"writer": "w1", "timestamp": "2026-07-02T12:00:00+05:30", "ttl_minutes": 1.9, "note": "x"}, "sources": {"src-1": {"sensitive": true, "cursor": "10"}}, "items": {"src-1:1": {"status": "closed", "fix_ref": "PR#1", "verified_at": "2026-07-01", "body": "old text", "verified_revision_id": "abc"}}}` + "\n"},
	{"# comment\nschema_version: 1\nzeta: 1\nlast_run:\n  outcome: \"completed\"\n", sweep.Parsed,
		"OK\n" + `{"schema_version": 1, "zeta": 1, "last_run": {"outcome": "completed"}, "sources": {}, "items": {}}` + "\n"},
	{"schema_version: 1\nlease:\n  writer: \"w3\"\n  timestamp: \"not a time\"\n  ttl_minutes: 0\n", sweep.Parsed,
		"OK\n" + `{"schema_version": 1, "lease": {"writer": "w3", "timestamp": "not a time", "ttl_minutes": 0}, "sources": {}, "items": {}}` + "\n"},
	{"schema_version: 1\nlease:\n  writer: \"w1\"\n  timestamp: \"2026-07-02T12:00:00Z\"\n  ttl_minutes: 60\nsources:\n  src-1:\n    cursor: 10\n  C42: \"flat\"\n  \"yes\":\n    cursor: null\nitems:\n  \"src-1:1\": \"not a map\"\n  \"C42:9\": {}\n", sweep.Parsed,
		"OK\n" + `{"schema_version": 1, "lease": {"writer": "w1", "timestamp": "2026-07-02T12:00:00Z", "ttl_minutes": 60}, "sources": {"src-1": {"cursor": 10}, "C42": "flat", "yes": {"cursor": null}}, "items": {"src-1:1": "not a map", "C42:9": {}}}` + "\n"},
}

// state is the model's view of the hand-written file. The document itself
// comes from the codec, but only after its acceptance matched e.kind;
// TestHandEditTexts checks the content through `read`.
func (e handEdit) state() (sweep.State, error) {
	doc, err := yamlsubset.Parse([]byte(e.text))
	switch e.kind {
	case sweep.Blank:
		return sweep.State{Kind: sweep.Blank}, nil
	case sweep.Unreadable:
		if err == nil {
			return sweep.State{}, fmt.Errorf("the codec accepts %q, which must be refused", e.text)
		}
		return sweep.State{Kind: sweep.Unreadable}, nil
	}
	if err != nil {
		return sweep.State{}, fmt.Errorf("the codec refuses %q: %v", e.text, err)
	}
	return sweep.State{Kind: sweep.Parsed, Doc: doc}, nil
}

// TestHandEditTexts: the engine's and the model's `read` of every hand
// edit give the hand-written answer.
func TestHandEditTexts(t *testing.T) {
	for i, e := range handEdits {
		st, err := e.state()
		if err != nil {
			t.Errorf("hand edit %d: %v", i, err)
			continue
		}
		res, _ := sweep.Apply(st, sweep.Read{})
		model := res.Word + "\n"
		if res.Payload != nil {
			model += string(pyjson.Encode(res.Payload)) + "\n"
		}
		if model != e.read {
			t.Errorf("hand edit %d: model reads\n%q\nwant\n%q", i, model, e.read)
		}
		state := filepath.Join(t.TempDir(), "state.yml")
		if err := os.WriteFile(state, []byte(e.text), 0o600); err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if rc := sweepcli.Main([]string{"read", "--state", state}, &stdout, &stderr); rc != 0 || stdout.String() != e.read {
			t.Errorf("hand edit %d: engine reads (exit %d)\n%q\nwant\n%q", i, rc, stdout.String(), e.read)
		}
	}
}

// HandEdit replaces the state file by hand: corrupt text, a file without
// schema_version, whitespace only, or a valid document with hand-made
// values (TTL as text or float, newer schema, legacy evidence field).
func (m *machine) HandEdit(t *rapid.T) {
	e := rapid.SampledFrom(handEdits).Draw(t, "hand file")
	st, err := e.state()
	if err != nil {
		t.Fatal(err)
	}
	m.writeFile(t, m.state, []byte(e.text))
	m.log = append(m.log, fmt.Sprintf("write %s %s", "sub/state.yml", strconv.Quote(e.text)))
	m.raw = []byte(e.text)
	m.cursors = nil
	m.model = st
}

// FlagSource edits the file by hand to give a source (new or known) a
// source-level sensitive flag: true, or a value that is not the boolean.
// Later upserts on that source must redact body and quote.
func (m *machine) FlagSource(t *rapid.T) {
	if m.model.Kind != sweep.Parsed {
		t.Skip("no document to edit")
	}
	doc := value.Clone(m.model.Doc).(*value.Map)
	srcs, ok := mustMap(doc, "sources")
	if !ok {
		t.Skip("sources is not a map")
	}
	src := rapid.SampledFrom(sources).Draw(t, "source")
	if known := m.knownItems(); len(known) > 0 && rapid.IntRange(0, 3).Draw(t, "known source?") > 0 {
		src = rapid.SampledFrom(known).Draw(t, "known item")[0]
	}
	entry, isMap := mustMap(srcs, src)
	if !isMap {
		entry = value.NewMap()
		srcs.Set(src, entry)
	}
	entry.Set("sensitive", rapid.SampledFrom([]value.Value{true, true, true, "true", value.Int(1), false}).Draw(t, "flag"))
	text := yamlsubset.Emit(doc)
	parsed, err := yamlsubset.Parse(text)
	if err != nil {
		t.Fatalf("emitted document does not parse: %v", err)
	}
	m.writeFile(t, m.state, text)
	m.log = append(m.log, fmt.Sprintf("write %s %s", "sub/state.yml", strconv.Quote(string(text))))
	m.model = sweep.State{Kind: sweep.Parsed, Doc: parsed}
}

// knownItems lists the (source, id) of the model's items that carry both
// as strings: the items upsert-item made.
func (m *machine) knownItems() [][2]string {
	if m.model.Kind != sweep.Parsed {
		return nil
	}
	items, _ := mustMap(m.model.Doc, "items")
	if items == nil {
		return nil
	}
	var out [][2]string
	for _, k := range items.Keys() {
		item, _ := mustMap(items, k)
		if item == nil {
			continue
		}
		src, _ := item.Get("source")
		id, _ := item.Get("id")
		s, sok := src.(string)
		i, iok := id.(string)
		if sok && iok && s+":"+i == k {
			out = append(out, [2]string{s, i})
		}
	}
	return out
}

// cursorOf is the model's string cursor of src.
func (m *machine) cursorOf(src string) (string, bool) {
	if m.model.Kind != sweep.Parsed {
		return "", false
	}
	srcs, _ := mustMap(m.model.Doc, "sources")
	if srcs == nil {
		return "", false
	}
	entry, _ := mustMap(srcs, src)
	if entry == nil {
		return "", false
	}
	c, _ := entry.Get("cursor")
	s, ok := c.(string)
	return s, ok
}

// flaggedSources lists the sources whose sensitive flag is true.
func (m *machine) flaggedSources() []string {
	if m.model.Kind != sweep.Parsed {
		return nil
	}
	srcs, _ := mustMap(m.model.Doc, "sources")
	if srcs == nil {
		return nil
	}
	var out []string
	for _, k := range srcs.Keys() {
		entry, _ := mustMap(srcs, k)
		if entry == nil {
			continue
		}
		if v, _ := entry.Get("sensitive"); v == true {
			out = append(out, k)
		}
	}
	return out
}

// Remove deletes the state file.
func (m *machine) Remove(t *rapid.T) {
	if err := os.Remove(m.state); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	m.log = append(m.log, "rm sub/state.yml")
	m.model = sweep.State{Kind: sweep.Absent}
	m.cursors = nil
}

func (m *machine) writeFile(t *rapid.T, path string, b []byte) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if path != m.state {
		m.log = append(m.log, fmt.Sprintf("write %s %s", filepath.Base(path), strconv.Quote(string(b))))
	}
}
