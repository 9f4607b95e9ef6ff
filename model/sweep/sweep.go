// Package sweep is the executable model of the sweep state engine: one
// deterministic function, Apply, from (file state, command) to (answer, next
// file state). It is a second, independent reading of the contract
// (spec/sweep-state.md);
// section numbers (§n) in comments refer to it.
//
// The model does no I/O and reads no clock: the caller parses the file and
// the JSON arguments and passes "now" as the string the CLI would store.
// It imports only the standard library and model/value.
//
// Where the contract is silent the model decides as follows (each decision
// belongs in spec/sweep-state.md as well):
//   - Load: no schema_version is CORRUPT before items that is not a map is
//     ERROR; missing sources then items are appended in that order. A
//     sources that is not a map is ERROR only in the calls that use it.
//   - "Has no verified_revision_id" means the key is absent.
//   - upsert-item judges, in order: the file (CORRUPT/ERROR), the lease
//     (LEASE-LOST), the --json (ERROR).
//   - A lease is held when its writer is truthy; only a string equal to
//     --writer is the caller.
//   - Sources: a null cursor is no cursor; a non-string cursor compares by
//     its Python str(); a non-map source entry has no cursor, and setting
//     a cursor on it (cursor-advance, import-legacy) is ERROR, as in the
//     reference.
//   - import-legacy: a legacy cursor is compared through its Python str()
//     (it is stored as it is, as the reference does); a source map that is JSON but not an object is ignored; dict-form
//     entries with an empty id or non-map fields are skipped (not counted);
//     "lacks a field" means the key is absent; a blank state file counts as
//     absent (so it is written even when nothing was imported).
//   - run-record: counts holding NaN or Infinity count as not JSON ({}).
//   - D1: only an integer schema_version above 1 is kept; anything else is
//     written as 1.
//   - Times: a trailing Z is replaced by +00:00 before parsing (so
//     "2026-07-02Z" is midnight UTC); ISO week dates of year 0 are refused.
//   - int() of text and the cursor digit test take the decimal digits of
//     every script (Nd), not the wider str.isdigit set (D11).
package sweep

import (
	"math/big"

	"github.com/stateguard/stateguard/model/value"
)

// FileKind says what the state path held when the engine loaded it.
type FileKind int

const (
	// Absent: no file at the path.
	Absent FileKind = iota
	// Blank: a file holding only whitespace; it reads as NO-STATE and the
	// next write replaces it (§11, §13.3).
	Blank
	// Unreadable: a file that cannot be read or parsed as the YAML subset,
	// is a directory, or is not owned by the effective user (§13.3).
	Unreadable
	// Parsed: a file that parsed as a mapping; Doc holds it in file order.
	Parsed
)

// State is the state file as the engine sees it. Doc is set only for
// Parsed; it is treated as read-only.
type State struct {
	Kind FileKind
	Doc  *value.Map
}

// Status words of §14.
const (
	OK             = "OK"
	NoState        = "NO-STATE"
	Corrupt        = "CORRUPT"
	Locked         = "LOCKED"
	StaleReclaimed = "STALE-RECLAIMED"
	LeaseLost      = "LEASE-LOST"
	Refused        = "REFUSED"
	Error          = "ERROR"
)

// Result is the answer of one call: the status word, the payload (nil when
// there is none) and whether the file was written.
type Result struct {
	Word    string
	Payload value.Value
	Wrote   bool
}

// Decoded is an argument that arrives as JSON (or, for a legacy file, as
// JSON or the YAML subset). OK is false when the argument was absent, did
// not decode, or held a non-finite number; Value is then ignored.
type Decoded struct {
	Value value.Value
	OK    bool
}

// Command is one subcommand with its arguments already validated by the
// command line (§14.3, §16: misuse never reaches the engine).
type Command interface{ command() }

// Read is `read` (§11).
type Read struct{}

// Validate is `validate` (§4.3).
type Validate struct{}

// UpsertItem is `upsert-item` (§5, §6, §7).
type UpsertItem struct {
	Source, ID, Writer, Now string
	Item                    Decoded
}

// CursorGet is `cursor-get` (§9.1).
type CursorGet struct{ Source string }

// CursorAdvance is `cursor-advance` (§9.2).
type CursorAdvance struct {
	Source, To, PastItem, Writer, Now string
}

// LeaseAcquire is `lease-acquire` (§7.3). TTLMinutes is nil when
// --ttl-minutes was not given (default 60); the CLI refuses negatives (D7).
type LeaseAcquire struct {
	Writer, Now string
	TTLMinutes  *big.Int
}

// LeaseRelease is `lease-release` (§7.4).
type LeaseRelease struct{ Writer string }

// RunRecord is `run-record` (§10); Outcome is already one of the four words.
type RunRecord struct {
	Writer, Outcome, Timestamp string
	Counts                     Decoded
}

// ImportLegacy is `import-legacy` (§12). Legacy is the legacy file decoded
// as JSON or else as the YAML subset (not OK when missing or unreadable);
// SourceMap is --source-map (not OK when absent or not JSON).
type ImportLegacy struct {
	Legacy    Decoded
	SourceMap Decoded
}

func (Read) command()          {}
func (Validate) command()      {}
func (UpsertItem) command()    {}
func (CursorGet) command()     {}
func (CursorAdvance) command() {}
func (LeaseAcquire) command()  {}
func (LeaseRelease) command()  {}
func (RunRecord) command()     {}
func (ImportLegacy) command()  {}

// Apply runs one engine call: load, decide, and (maybe) write. The next
// State is what the file holds afterwards; after a write it is the document
// in canonical order, exactly as a later load will see it.
func Apply(st State, cmd Command) (Result, State) {
	doc, word := load(st)
	if word != "" {
		return Result{Word: word}, st
	}
	var res Result
	switch c := cmd.(type) {
	case Read:
		res = read(doc)
	case Validate:
		res = validate(doc)
	case UpsertItem:
		res = upsertItem(doc, c)
	case CursorGet:
		res = cursorGet(doc, c)
	case CursorAdvance:
		res = cursorAdvance(doc, c)
	case LeaseAcquire:
		res, doc = leaseAcquire(doc, c)
	case LeaseRelease:
		res = leaseRelease(doc, c)
	case RunRecord:
		res, doc = runRecord(doc, c)
	case ImportLegacy:
		res, doc = importLegacy(doc, c)
	default:
		panic("sweep: unknown command")
	}
	if !res.Wrote {
		return res, st
	}
	return res, State{Kind: Parsed, Doc: written(doc)}
}

// load turns the file into the working document (§2, §11, §13.3, §15.2). It
// returns a status word instead when the call must stop here. For an
// absent or blank file the document is nil.
func load(st State) (*value.Map, string) {
	switch st.Kind {
	case Absent, Blank:
		return nil, ""
	case Unreadable:
		return nil, Corrupt
	}
	if !st.Doc.Has("schema_version") {
		return nil, Corrupt
	}
	// items that is not a map is ERROR for every call (recorded); sources
	// that is not a map is kept, and only a call that uses it is ERROR,
	// as in the reference (badSources).
	if v, ok := st.Doc.Get("items"); ok {
		if _, isMap := v.(*value.Map); !isMap {
			return nil, Error
		}
	}
	doc := value.Clone(st.Doc).(*value.Map)
	for _, k := range []string{"sources", "items"} {
		if !doc.Has(k) {
			doc.Set(k, value.NewMap())
		}
	}
	items := mapAt(doc, "items")
	for _, key := range items.Keys() {
		if item := mapAt(items, key); item != nil {
			migrateMergeSHA(item)
		}
	}
	return doc, ""
}

// migrateMergeSHA applies the legacy rule of §2.5: without a
// verified_revision_id, verified_merge_sha moves there when truthy and is
// dropped when falsy; with both present both stay.
func migrateMergeSHA(item *value.Map) {
	sha, has := item.Get("verified_merge_sha")
	if !has || item.Has("verified_revision_id") {
		return
	}
	item.Delete("verified_merge_sha")
	if Truthy(sha) {
		item.Set("verified_revision_id", sha)
	}
}

// newDocument is what a call that creates the file starts from.
func newDocument() *value.Map {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	doc.Set("sources", value.NewMap())
	doc.Set("items", value.NewMap())
	return doc
}

// written is the document as the file holds it after a write: schema_version
// 1 unless the file carried a higher integer version (D1), keys in canonical
// order (§15.1).
func written(doc *value.Map) *value.Map {
	v, _ := doc.Get("schema_version")
	if n, ok := v.(*big.Int); !ok || n.Cmp(big.NewInt(1)) <= 0 {
		doc.Set("schema_version", value.Int(1))
	}
	return Canonical(doc)
}

// badSources reports a sources value that is not a map (a hand edit): the
// reference answers every call that does not use it and fails, ERROR with
// nothing written, in those that do (cursor-get, an owned upsert-item or
// cursor-advance, an import of a channel).
func badSources(doc *value.Map) bool {
	if doc == nil {
		return false // no file: nothing to fail on
	}
	v, _ := doc.Get("sources")
	_, isMap := v.(*value.Map)
	return !isMap
}

// badEntry reports a source entry that is present but not a map, which the
// reference fails on where it would set a cursor on it.
func badEntry(sources *value.Map, source string) bool {
	v, ok := sources.Get(source)
	_, isMap := v.(*value.Map)
	return ok && !isMap
}

// mapAt returns m[k] when it is a map, else nil.
func mapAt(m *value.Map, k string) *value.Map {
	if m == nil {
		return nil
	}
	v, _ := m.Get(k)
	sub, _ := v.(*value.Map)
	return sub
}

// payload builds a small ordered map from key/value pairs.
func payload(kv ...value.Value) *value.Map {
	m := value.NewMap()
	for i := 0; i+1 < len(kv); i += 2 {
		m.Set(kv[i].(string), kv[i+1])
	}
	return m
}
