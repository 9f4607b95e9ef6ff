package sweepstate

import (
	"errors"
	"io"
	"slices"
	"strings"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepfast"
)

// errNotJoined: the split-off items could not be put back (a defect: the
// decision added a key it was not given). Nothing was written.
var errNotJoined = errors.New("sweepstate: split items could not be joined")

// loadFor loads the state file for cmd. For a command that touches few
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
func loadFor(path string, cmd Command, legacy legacyFile, streamed bool) (loaded, *yamlsubset.Split, *Result) {
	keep := touched(cmd, legacy)
	if keep == nil || sweepfast.Off() {
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
func streams(cmd Command) bool {
	switch cmd.(type) {
	case CursorGet, Validate:
		return true
	}
	return false
}

// touched is the set of items cmd may read or change, as a test on an
// item's key and its text in the engine's form, or nil when cmd needs all
// of them. legacy is import-legacy's parsed file.
func touched(cmd Command, legacy legacyFile) func(key, block string) bool {
	switch c := cmd.(type) {
	case ImportLegacy:
		return legacyTouches(legacy)
	case UpsertItem:
		key := c.Source + ":" + c.ID
		return func(k, _ string) bool { return k == key }
	case CursorAdvance:
		key := c.Source + ":" + c.PastItem
		return func(k, _ string) bool { return k == key }
	case Validate:
		// Only a closed item can change.
		return func(key, block string) bool { return closedStatus(key, block) }
	case CursorGet, LeaseAcquire, LeaseRelease, RunRecord:
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
// hands it to keep (its key line, then its own keys' lines at four
// spaces in the item order of yamlsubset's Emit, with the lines below a
// key deeper), has each field import-legacy copies into an item: source,
// status, title and url, whatever their values. In that order they rank
// first, with only sensitive among them, so the lines after url's are not
// read; an entry in another order, or with a key spelled otherwise than
// bare (which canonical text never does for these), counts as lacking
// them, so it is parsed.
func hasLegacyFields(block string) bool {
	const indent = "    "
	want := [...]string{"source:", "status:", "title:", "url:"}
	seen := 0
	rest := block[strings.IndexByte(block, '\n')+1:] // after the key line
	for seen < len(want) {
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			return false
		}
		line := rest[:nl]
		rest = rest[nl+1:]
		if len(line) <= len(indent) || line[:len(indent)] != indent {
			return false // the entry ends
		}
		switch key := line[len(indent):]; {
		case key[0] == ' ':
			// A line below a key.
		case strings.HasPrefix(key, want[seen]):
			seen++
		case seen == 2 && strings.HasPrefix(key, "sensitive:"):
			// Ranks between status and title.
		default:
			return false
		}
	}
	return true
}

// closedStatus reports whether block, the items entry of key as
// SplitItems and ScanItems hand it to keep (its key line and the lines
// below it, each with its "\n", checked canonical but for the reference
// writer's forms), holds the line `    status: "closed"`: the entry's own
// status, the one spelling of that string both writers use. Only that
// line says the item is closed. It is the same test as looking for the
// line anywhere in block (strings.Contains), but reads only the lines
// where the status can be: the entry's keys come in rank order
// (yamlsubset's item order), and only source ranks before status, so its
// line is the entry's first at that indent, or the first after source's
// (and the lines below source's, should source be a map).
func closedStatus(key, block string) bool {
	const indent, line = "    ", "status: \"closed\"\n"
	// From the line after the key line. A "\n" at len(key)+5 ends it (the
	// usual item's, `  "key":` with its key quoted and raw): the key line
	// is at least len(key)+4 bytes long (`  key:`) and the lines after it
	// begin with 4 spaces.
	i := len(key) + 6
	if i > len(block) || block[i-1] != '\n' {
		i = strings.IndexByte(block, '\n') + 1
	}
	for {
		rest := block[i:]
		if len(rest) <= len(indent) || rest[:len(indent)] != indent {
			return false // the entry ends: no status
		}
		switch rest = rest[len(indent):]; {
		case rest[0] == ' ':
			// A line below source's.
		case strings.HasPrefix(rest, "status:"):
			return strings.HasPrefix(rest, line)
		case !strings.HasPrefix(rest, "source:"):
			return false // a key that ranks after status
		}
		i += len(indent) + strings.IndexByte(rest, '\n') + 1
	}
}
