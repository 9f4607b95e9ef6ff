package sweepstate

import (
	"errors"
	"io"
	"strings"

	"github.com/stateguard/stateguard/internal/sweepfast"
	"github.com/stateguard/stateguard/internal/yamlsubset"
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
func loadFor(path string, cmd Command, streamed bool) (loaded, *yamlsubset.Split, *Result) {
	keep := touched(cmd)
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
// of them.
func touched(cmd Command) func(key, block string) bool {
	switch c := cmd.(type) {
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
