package sweepcore

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepfast"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
)

// errNotJoined: the split-off items could not be put back (a defect: the
// decision added a key it was not given). Nothing was written.
var errNotJoined = errors.New("sweepstate: split items could not be joined")

// loadPath is the way a command's load reads a state file in the
// engine's own form. A file in any other form, or one a fast path
// declines, is parsed whole whatever the way.
type loadPath int

const (
	// wholeFile: the general parser on the whole file (every command
	// that needs every item).
	wholeFile loadPath = iota
	// jsonText: read's payload transcoded from the text by
	// yamlsubset.ReadJSON, no document built (ReadText); Run's read,
	// which answers the document, loads the whole file.
	jsonText
	// splitItems: yamlsubset.SplitItems; only the items keep wants are
	// parsed, and a write puts the others back as the file had them.
	splitItems
	// scanItems: yamlsubset.ScanItems through a buffer, for a command
	// that writes nothing or only in a case it can tell from the items
	// it keeps; the items keep does not want are dropped, so a decision
	// that writes loads again by splitItems.
	scanItems
)

// loadPlan is the one table of the way each command's load takes and
// the items it parses (keep: a test on an item's key and its text in the
// engine's form; nil with wholeFile). legacy is import-legacy's parsed
// file.
func loadPlan(cmd Command, legacy legacyFile) (loadPath, func(key, block string) bool) {
	switch c := cmd.(type) {
	case Read:
		return jsonText, nil
	case mergeInput:
		// Each item is merged from its entries' texts where they settle
		// it: none is parsed here.
		return splitItems, keepNone
	case CursorGet:
		return scanItems, keepNone
	case Validate:
		// Only a closed item can change.
		return scanItems, func(_, block string) bool { return closedStatus(block) }
	case LeaseAcquire, LeaseRelease, RunRecord:
		return splitItems, keepNone
	case UpsertItem:
		return splitItems, keepKey(c.Source + ":" + c.ID)
	case CursorAdvance:
		return splitItems, keepKey(c.Source + ":" + c.PastItem)
	case ImportLegacy:
		return splitItems, legacyTouches(legacy)
	}
	return wholeFile, nil
}

func keepNone(string, string) bool { return false }

// mergeInput is the load of one of a merge's three texts, a row of
// loadPlan like the commands' (never run: no command line builds it).
type mergeInput struct{}

func (mergeInput) argsCommand() {}

// SplitMergeInput splits one of a merge's input texts the way loadPlan
// says: reduced is the text without the items entries it may leave out,
// and entries walks every items entry, as yamlsubset.SplitAllItems gives
// them under the load's rules (the merge's row keeps no entry, which is
// what SplitAllItems keeps). ok is false when the text is not in the
// engine's own form (or the plan splits nothing): the merge then parses
// it whole.
func SplitMergeInput(text string) (reduced string, entries yamlsubset.ItemEntries, ok bool) {
	way, _ := loadPlan(mergeInput{}, legacyFile{})
	if way != splitItems {
		return "", yamlsubset.ItemEntries{}, false
	}
	return yamlsubset.SplitAllItems(text, sweeprules.StateLoad())
}

func keepKey(key string) func(string, string) bool {
	return func(k, _ string) bool { return k == key }
}

// loadFor loads the state file for cmd the way loadPlan says. A ctx with
// sweepfast's option loads every file whole (the tests that hold the fast
// paths to the general one). By splitItems, others are the items left
// out, which the write puts back as they were; otherwise others is nil.
// With streamed unset, scanItems is taken as splitItems: the document
// comes back with partial set only from a streamed load, which keeps
// nothing to write back.
func loadFor(ctx context.Context, path string, cmd Command, legacy legacyFile, streamed bool) (loaded, *yamlsubset.Split, *Result) {
	way, keep := loadPlan(cmd, legacy)
	if way == wholeFile || way == jsonText || sweepfast.WholeFile(ctx) {
		st, failed := load(path)
		return st, nil, failed
	}
	f, fi, failed := open(path)
	if failed != nil {
		return loaded{}, nil, failed
	}
	if f == nil {
		return loaded{doc: freshDoc(), fresh: true}, nil, nil
	}
	defer f.Close()
	if streamed && way == scanItems && fi.Size() <= MaxFileSize {
		if reduced, ok := yamlsubset.ScanItems(f, MaxFileSize, sweeprules.StateLoad(), keep); ok {
			if st, failed := loadText(reduced); failed == nil {
				st.partial = true
				return st, nil, nil
			}
		}
		// Not this engine's text (or, should it fail, a reduced text
		// that does not load): read it again, whole, from the same
		// descriptor.
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return loaded{}, nil, corrupt("the state file cannot be read")
		}
	}
	text, failed := readText(f, fi)
	if failed != nil {
		return loaded{}, nil, failed
	}
	reduced, others, ok := yamlsubset.SplitItems(text, sweeprules.StateLoad(), keep)
	if !ok {
		st, failed := loadText(text)
		return st, nil, failed
	}
	st, failed := loadText(reduced)
	if failed != nil && others.Len() > 0 {
		// A canonical text loads without failing; should it fail, the
		// whole text decides the answer.
		st, failed = loadText(text)
		return st, nil, failed
	}
	if others.Len() == 0 {
		return st, nil, failed // reduced is text
	}
	return st, others, nil
}

// legacyTouches is the set of items import-legacy of the parsed file
// legacy may change: those its items name (legacyItems) that lack one of
// the fields it copies (legacyItemFields), and the ones whose block does
// not show (hasLegacyFields). The decision counts the others as imported
// and leaves them as they are (importItems), as it would on the whole
// document: it only adds a field the item lacks.
func legacyTouches(legacy legacyFile) func(key, block string) bool {
	named := make([]string, len(legacy.items))
	for i, e := range legacy.items {
		named[i] = e.key
	}
	if !slices.IsSorted(named) {
		slices.Sort(named)
	}
	// keep is asked in the file's key order (canonical items are sorted),
	// so each answer looks on from the last one; a key out of that order
	// is searched for.
	next := 0
	return func(key, block string) bool {
		if next > 0 && named[next-1] >= key {
			next, _ = slices.BinarySearch(named, key)
		}
		for next < len(named) && named[next] < key {
			next++
		}
		if next == len(named) || named[next] != key {
			return false
		}
		return !hasLegacyFields(block)
	}
}

// hasLegacyFields reports whether block, an items entry as SplitItems
// hands it to keep, has as keys of the item's own each field
// import-legacy copies into an item (legacyItemFields), whatever their
// values.
func hasLegacyFields(block string) bool {
	for _, f := range legacyItemFields {
		if _, found := yamlsubset.ItemField(block, f.to); !found {
			return false
		}
	}
	return true
}

// closedStatus reports whether block, an items entry as SplitItems and
// ScanItems hand it to keep, has as the item's own status the string
// "closed", in the one spelling both writers use for it. Only that says
// the item is closed: the same string under another key, or below one,
// does not.
func closedStatus(block string) bool {
	status, found := yamlsubset.ItemField(block, "status")
	return found && status == ` "closed"`
}
