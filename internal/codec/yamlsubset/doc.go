// Package yamlsubset is the codec of the sweep state file: a small subset of
// YAML that round-trips exactly (spec/sweep-state.md §15).
//
// One writer, Emit, writes the canonical text: a fixed layout and fixed key
// orders, so that a document has exactly one text. The general reader,
// Parse, reads every file the reference engine or a hand edit can produce,
// builds the whole document, and is the one reader whose answer counts.
//
// Beside it, three fast paths read the canonical text (and the few forms
// the reference writer and hand edits add to it) without building the
// document a command does not need: ReadJSON transcodes a file straight to
// read's JSON payload, SplitItems leaves out the items entries a command
// neither reads nor changes and JoinItemsTo puts them back into the emitted
// text, and ScanItems does SplitItems's check through a buffer for the
// commands that write nothing. Each checks every line it takes and declines
// (ok false) on anything it is not sure of, and the caller then parses the
// file whole: declining is always safe, and a fast path's answer is always
// Parse's (FuzzReadText and FuzzSplitItems hold them to it).
//
// Parse knows the file's grammar, not the engine's rules: what a document
// must hold (schema_version, the shape of items and sources) is checked by
// the engine after it. The fast paths answer without that check, so they
// take only files the engine's load would accept unchanged and decline the
// rest; the engine gives them its rules as data (LoadRules: the top-level
// keys required, those that must be maps, the keys the load rewrites), so
// the codec holds none of them.
//
// The fast paths are two scanners of the engine's own form: ReadJSON's
// transcoder and the canonical scan of SplitItems and ScanItems. They share
// one recognizer's parts (the open blocks and their key order, the rules,
// the usual key, the buffered window of whole lines) and differ in the
// values they take as they are and in what they make of a line: JSON text,
// or an items entry cut off or kept. Their hot loop over the lines of a
// block is one (runLines), compiled once for each scanner's sink.
package yamlsubset

import "errors"

// ErrCorrupt marks text that is not a valid state document.
var ErrCorrupt = errors.New("yamlsubset: corrupt document")
