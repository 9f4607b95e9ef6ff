package sweepstate

import (
	"context"
	"errors"
	"io"
	"slices"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepargs"
	"github.com/stateguard/stateguard/internal/engine/sweepfast"
)

// errNotJoined: the split-off items could not be put back (a defect: the
// decision added a key it was not given). Nothing was written.
var errNotJoined = errors.New("sweepstate: split items could not be joined")

// loadFor loads the state file for cmd. A ctx with sweepfast's option
// loads every file whole (the tests that hold the fast paths to it). For a command that touches few
// items, a file in the engine's own form is parsed without the items the
// command neither reads nor changes (yamlsubset.SplitItems): others are
// those items, which the write puts back as they were. Any other file,
// and every other command, is loaded whole (others nil).
//
// With streamed set, for cursor-get and validate, such a file is read
// through a buffer and not kept (yamlsubset.ScanItems): the document
// comes back without the items left out and with partial set, and
// without them to put back; a decision that writes must load again
// without streamed.
func loadFor(ctx context.Context, path string, cmd sweepargs.Command, legacy legacyFile, streamed bool) (loaded, *yamlsubset.Split, *Result) {
	keep := touched(cmd, legacy)
	if keep == nil || sweepfast.WholeFile(ctx) {
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
	if streamed && streams(cmd) && fi.Size() <= MaxFileSize {
		if reduced, ok := yamlsubset.ScanItems(f, MaxFileSize, keep); ok {
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
	reduced, others, ok := yamlsubset.SplitItems(text, keep)
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

// streams reports the commands loadFor may stream: those that write
// nothing, or only in a case they can tell from the items they keep.
func streams(cmd sweepargs.Command) bool {
	switch cmd.(type) {
	case sweepargs.CursorGet, sweepargs.Validate:
		return true
	}
	return false
}

// touched is the set of items cmd may read or change, as a test on an
// item's key and its text in the engine's form, or nil when cmd needs all
// of them. legacy is import-legacy's parsed file.
func touched(cmd sweepargs.Command, legacy legacyFile) func(key, block string) bool {
	switch c := cmd.(type) {
	case sweepargs.ImportLegacy:
		return legacyTouches(legacy)
	case sweepargs.UpsertItem:
		key := c.Source + ":" + c.ID
		return func(k, _ string) bool { return k == key }
	case sweepargs.CursorAdvance:
		key := c.Source + ":" + c.PastItem
		return func(k, _ string) bool { return k == key }
	case sweepargs.Validate:
		// Only a closed item can change.
		return func(_, block string) bool { return closedStatus(block) }
	case sweepargs.CursorGet, sweepargs.LeaseAcquire, sweepargs.LeaseRelease, sweepargs.RunRecord:
		return func(string, string) bool { return false }
	}
	return nil
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
