package sweepcore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"math/big"
	"os"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/storage/durable"
	"github.com/stateguard/stateguard/model/value"
)

// loaded is a document after a successful load.
type loaded struct {
	doc *value.Map
	// fresh is true when the file was absent or held only whitespace: the
	// NO-STATE case, whose next write creates the file with version 1.
	fresh bool
	// partial: doc lacks items the file has, and nothing holds them to
	// write back (loadFor streamed); such a document is never written.
	partial bool
}

// Run executes cmd against the state file at path: one load, one
// decision, at most one write. A mutating command holds the file lock
// throughout and waits for it until ctx ends; once ctx is done nothing is
// written (the answer is ERROR with Fault Ended). clock supplies an empty
// Now (nil means the system clock); it is read once, before the decision.
func Run(ctx context.Context, clock func() time.Time, path string, cmd Command) Result {
	if res, valid := check(cmd); !valid {
		return res
	}
	if err := ctx.Err(); err != nil {
		return ended(err)
	}
	if mutating(cmd) {
		// A link at the state path stays a link: the write replaces the
		// file it names, under that file's lock (spec §13.1).
		target, err := durable.ResolveLink(path)
		if err != nil {
			return ioFailure("cannot follow the state file's symbolic link", err)
		}
		path = target
		if err := durable.EnsureParent(path); err != nil {
			return ioFailure("cannot create the state file's parent directory", err)
		}
		lock, err := durable.AcquireContext(ctx, durable.LockPath(path))
		if ctxErr := ctx.Err(); err != nil && ctxErr != nil {
			return ended(ctxErr)
		}
		if err != nil {
			return ioFailure("cannot lock the state file", err)
		}
		defer lock.Unlock()
	}
	var legacy legacyFile
	if imp, ok := cmd.(ImportLegacy); ok {
		// Before the state: the items it names decide which the load
		// parses.
		legacy = parseLegacyFile(readLegacy(imp.File))
	}
	st, others, failed := loadFor(ctx, path, cmd, legacy, true)
	if failed != nil {
		return *failed
	}
	in := input{loaded: st, now: now(cmd, clock), legacy: legacy, splitOff: others}
	res, write := decide(in, cmd)
	if write && st.partial {
		// A streamed load kept nothing to write back the items it left
		// out: load again, with them, and decide again.
		if st, others, failed = loadFor(ctx, path, cmd, legacy, false); failed != nil {
			return *failed
		}
		in.loaded, in.splitOff = st, others
		res, write = decide(in, cmd)
	}
	if !write {
		return res
	}
	if err := ctx.Err(); err != nil {
		return ended(err)
	}
	stampVersion(st)
	// Streamed: the new text is never held whole next to the old text and
	// the tree.
	emit := func(w io.Writer) error { return yamlsubset.EmitTo(w, st.doc) }
	if others != nil {
		// The document holds only the items the command touched: the
		// others go back in as the file had them.
		emit = joinedEmit(yamlsubset.Emit(st.doc), others)
	}
	if err := durable.WriteFileFunc(path, emit); err != nil {
		return ioFailure("cannot write the state file", err)
	}
	return res
}

// joinedEmit writes emitted with others put back among its items. A join
// that cannot put them back (a defect: the decision added a key it was
// not given) fails the write with errNotJoined before anything is
// written, so the file keeps its text.
func joinedEmit(emitted []byte, others *yamlsubset.Split) func(io.Writer) error {
	return func(w io.Writer) error {
		joined, err := yamlsubset.JoinItemsTo(w, emitted, others)
		if err == nil && !joined {
			err = errNotJoined
		}
		return err
	}
}

// ended is the answer of a call whose context ended before the write.
func ended(err error) Result {
	return Result{Word: WordError, Reason: "the context ended before the state file was written", Fault: Ended, Err: err}
}

// now resolves the command's --now: verbatim when given, else the clock in
// Python's isoformat.
func now(cmd Command, clock func() time.Time) string {
	var given string
	switch c := cmd.(type) {
	case UpsertItem:
		given = c.Now
	case CursorAdvance:
		given = c.Now
	case LeaseAcquire:
		given = c.Now
	case Metrics:
		given = c.Now
	default:
		return ""
	}
	if given != "" {
		return given
	}
	if clock == nil {
		clock = time.Now
	}
	return isotime.Format(clock())
}

// mutating reports whether cmd takes the file lock and may write.
func mutating(cmd Command) bool {
	switch cmd.(type) {
	case Read, CursorGet, Metrics:
		return false
	}
	return true
}

// corrupt is a CORRUPT answer with its fixed reason (never a value from
// the file or the command line).
func corrupt(reason string) *Result { return &Result{Word: WordCorrupt, Reason: reason} }

// parseReason is the parser's own reason for a CORRUPT document, such as
// "line 3: ambiguous unquoted scalar": its rules are fixed phrases and the
// line is a number.
func parseReason(err error) string {
	prefix := yamlsubset.ErrCorrupt.Error() + ": "
	if msg := err.Error(); errors.Is(err, yamlsubset.ErrCorrupt) && strings.HasPrefix(msg, prefix) {
		return strings.TrimPrefix(msg, prefix)
	}
	return "the state file is outside the YAML subset"
}

// load reads and checks the state file (spec/sweep-state.md §2, §13.3, §15.2).
func load(path string) (loaded, *Result) {
	f, fi, failed := open(path)
	if failed != nil {
		return loaded{}, failed
	}
	if f == nil {
		return loaded{doc: freshDoc(), fresh: true}, nil
	}
	defer f.Close()
	return loadFrom(f, fi)
}

// open opens the state file for a load and checks what it is and who owns
// it. A nil file without a result means the file does not exist.
func open(path string) (*os.File, fs.FileInfo, *Result) {
	f, fi, err := durable.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	// A directory, FIFO or device, an unreadable file or a co-tenant's.
	if err != nil {
		return nil, nil, corrupt("the state file is not a regular file or cannot be opened")
	}
	if !durable.OwnedByEffectiveUser(fi) {
		f.Close()
		return nil, nil, corrupt("the state file is not owned by the effective user")
	}
	return f, fi, nil
}

// loadFrom reads the opened state file f from its current offset.
func loadFrom(f *os.File, fi fs.FileInfo) (loaded, *Result) {
	text, failed := readText(f, fi)
	if failed != nil {
		return loaded{}, failed
	}
	return loadText(text)
}

// readText reads the opened state file f from its current offset.
func readText(f *os.File, fi fs.FileInfo) (string, *Result) {
	text, err := readString(f, fi.Size())
	if errors.Is(err, errTooLarge) {
		return "", corrupt("the state file is larger than 256 MiB")
	}
	if err != nil {
		return "", corrupt("the state file cannot be read")
	}
	return text, nil
}

// loadText checks and parses the text of the state file.
func loadText(text string) (loaded, *Result) {
	if !utf8.ValidString(text) {
		// Python's UTF-8 read would fail.
		return loaded{}, corrupt("the state file is not valid UTF-8")
	}
	if strings.TrimFunc(text, isPySpace) == "" {
		return loaded{doc: freshDoc(), fresh: true}, nil
	}
	doc, err := yamlsubset.ParseString(text)
	if err != nil {
		return loaded{}, corrupt(parseReason(err))
	}
	if failed := applyLoadRules(doc); failed != nil {
		return loaded{}, failed
	}
	return loaded{doc: doc}, nil
}

// applyLoadRules applies the load's rules (sweeprules) to doc, a parsed
// state document, in place: CORRUPT without schema_version, sources and
// items added as empty maps when absent, ERROR for an items that is not a
// map, the legacy evidence key renamed. A sources that is not a map is
// kept: only the calls that use it answer ERROR (sourcesOf), as the
// reference does.
func applyLoadRules(doc *value.Map) *Result {
	if !doc.Has(sweeprules.VersionKey) {
		return corrupt("the state file has no schema_version")
	}
	for _, k := range []string{sweeprules.SourcesKey, sweeprules.ItemsKey} {
		v, ok := doc.Get(k)
		if !ok {
			doc.Set(k, value.NewMap())
			continue
		}
		if _, isMap := v.(*value.Map); !isMap && k == sweeprules.ItemsKey {
			r := notAMapping("the state file's items is not a mapping")
			return &r
		}
	}
	renameLegacyEvidence(mapAt(doc, sweeprules.ItemsKey))
	return nil
}

// MaxFileSize caps the state file and the legacy file the engine reads:
// far above any sweep's file (a few hundred bytes an item), far below
// what would exhaust memory. A larger state file is CORRUPT (never overwritten); a larger
// legacy file imports nothing.
const MaxFileSize = 256 << 20

// errTooLarge reports a file beyond MaxFileSize.
var errTooLarge = errors.New("file larger than the engine reads")

// readString reads f as one string. The bytes are read straight into the
// string's memory (no buffer to copy from, no []byte-to-string copy) and
// never written after; the parsed document refers into it. size is a hint
// (the file may change between stat and read): it presizes the buffer only
// up to the cap, and at most MaxFileSize+1 bytes are ever read.
func readString(f *os.File, size int64) (string, error) {
	if size > MaxFileSize {
		return "", errTooLarge
	}
	// +512: the read that sees EOF must not grow it (as os.ReadFile).
	buf := make([]byte, 0, max(size, 0)+512)
	// Tens of megabytes the process has not touched yet: faulted in 2 MiB
	// at a time rather than 4 KiB where the kernel allows it.
	yamlsubset.AdviseHugePages(buf)
	r := io.LimitReader(f, MaxFileSize+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		if len(buf) == cap(buf) { // the file grew after the stat
			buf = append(buf, 0)[:len(buf)]
		}
	}
	if len(buf) > MaxFileSize {
		return "", errTooLarge // the file grew after the stat
	}
	return unsafe.String(unsafe.SliceData(buf), len(buf)), nil
}

// renameLegacyEvidence moves a truthy verified_merge_sha to
// verified_revision_id on items that lack the latter; a falsy one is dropped.
func renameLegacyEvidence(items *value.Map) {
	for i := range items.Len() {
		_, v := items.At(i)
		item, ok := v.(*value.Map)
		if !ok || !item.Has(sweeprules.LegacyEvidenceKey) || item.Has("verified_revision_id") {
			continue
		}
		sha, _ := item.Get(sweeprules.LegacyEvidenceKey)
		item.Delete(sweeprules.LegacyEvidenceKey)
		if truthy(sha) {
			item.Set("verified_revision_id", sha)
		}
	}
}

func freshDoc() *value.Map {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	doc.Set("sources", value.NewMap())
	doc.Set("items", value.NewMap())
	return doc
}

// stampVersion sets schema_version before a write: 1, unless the file
// already carried a higher integer version (divergence D1).
func stampVersion(st loaded) {
	if !st.fresh {
		if v, ok := st.doc.Get("schema_version"); ok {
			if n, isInt := v.(*big.Int); isInt && n.Cmp(big.NewInt(1)) > 0 {
				return
			}
		}
	}
	st.doc.Set("schema_version", value.Int(1))
}

// sourcesOf returns doc's sources map; a hand edit may have made it
// something else, which fails the calls that use it (errBadSources).
func sourcesOf(doc *value.Map) (*value.Map, bool) {
	v, _ := doc.Get("sources")
	m, isMap := v.(*value.Map)
	return m, isMap
}

var errBadSources = notAMapping("the state file's sources is not a mapping")

// errBadSourceEntry answers a cursor set on a source entry that is not a
// map, which the reference fails on.
var errBadSourceEntry = notAMapping("a source entry in the state file is not a mapping")

// mapAt returns doc[k] as a map; load guarantees it for items (sources:
// see sourcesOf).
func mapAt(doc *value.Map, k string) *value.Map {
	v, _ := doc.Get(k)
	m, _ := v.(*value.Map)
	if m == nil {
		m = value.NewMap()
		doc.Set(k, m)
	}
	return m
}

// legacyInput is the legacy file for import-legacy, read at the edge.
type legacyInput struct {
	text    string
	present bool
}

// readLegacy reads a regular file of at most MaxFileSize bytes; anything
// else (a FIFO, a device, a larger or growing file) counts as unreadable:
// nothing is imported.
func readLegacy(path string) legacyInput {
	f, fi, err := durable.OpenRegular(path)
	if err != nil {
		return legacyInput{}
	}
	defer f.Close()
	return readLegacyFrom(f, fi.Size())
}

// readLegacyFrom reads the open legacy file f, whose size was measured as
// size: the file may grow after, so at most MaxFileSize bytes are read
// whatever size says (readString).
func readLegacyFrom(f *os.File, size int64) legacyInput {
	text, err := readString(f, size)
	if err != nil {
		return legacyInput{}
	}
	return legacyInput{text: text, present: true}
}
