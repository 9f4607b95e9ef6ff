// Package yamlsubset is the codec of the sweep state file: a small subset of
// YAML that round-trips exactly (spec/sweep-state.md §15).
//
// Its functions:
//
//	Parse(data []byte) (*value.Map, error)
//	    Reads a document. Errors (all wrapping ErrCorrupt) for: a line without
//	    a colon, a JSON value that does not parse or has trailing text, a tab
//	    in the indentation, a byte-order mark, a raw CR inside a quoted string,
//	    an ambiguous unquoted scalar, and a document whose top level is not a
//	    non-empty mapping (a comments-only file). It does not check
//	    schema_version or the shape of items/sources: the engine does.
//	    Whitespace-only input is the engine's NO-STATE case and is never passed.
//	ParseString(text string) (*value.Map, error)
//	    Parse for text held as a string; the document refers into text.
//	Emit(doc *value.Map) []byte
//	    Writes the canonical text: fixed key orders by depth, JSON strings,
//	    Python float repr, inline JSON lists and empty maps.
//	EmitTo(w io.Writer, doc *value.Map) error
//	    Emit's bytes, written to w in chunks.
//	ReadJSON(r io.Reader, size, limit int64) (text *outtext.Text, ok bool)
//	    read's fast path: the json.dumps text of a document in the form
//	    Emit writes, transcoded line by line without a tree; ok is false
//	    (decline, read it with Parse) on any other text.
//	SplitItems(text string, keep func(key, block string) bool) (reduced string, others []ItemBlock, ok bool)
//	JoinItemsTo(w io.Writer, emitted []byte, others []ItemBlock) (bool, error)
//	    The fast path of the commands that touch few items: a canonical
//	    text (Emit's bytes for what Parse reads) without the items entries
//	    keep does not want, and those entries put back, verbatim and in
//	    key order, into the text Emit writes for the decided document.
//	ScanItems(r io.Reader, limit int64, keep func(key, block string) bool) (reduced string, ok bool)
//	    SplitItems's check and reduced text, read from r through a buffer,
//	    for the commands that need only the reduced text (cursor-get,
//	    validate until it must write), without the entries in the
//	    reference writer's forms that keep does not want either.
package yamlsubset

import "errors"

// ErrCorrupt marks text that is not a valid state document.
var ErrCorrupt = errors.New("yamlsubset: corrupt document")
