package sweepcore

import (
	"io/fs"
	"os"

	"github.com/stateguard/stateguard/model/value"
)

// What the Go API's merge of three state files shares with the engine:
// the load's rules for a state file's text, the answers of a refused
// command and of a failed write, and Python's view of the file's values.

// LoadText checks and parses the text of a state file as every command's
// load does: the document (a new one for no state), or the CORRUPT or
// ERROR answer.
func LoadText(text string) (*value.Map, *Result) {
	st, failed := loadText(text)
	return st.doc, failed
}

// ApplyLoadRules applies the rules every command's load applies to the
// document it parsed, to doc in place: the CORRUPT or ERROR answer of a
// document the load refuses (no schema_version, an items that is not a
// map), else nil, with sources and items added when absent and the legacy
// evidence key renamed.
func ApplyLoadRules(doc *value.Map) *Result { return applyLoadRules(doc) }

// Open opens the state file at path for a load and checks what it is and
// who owns it. A nil file without a result means the file does not exist.
func Open(path string) (*os.File, fs.FileInfo, *Result) { return open(path) }

// ReadOpened reads the opened state file f (of FileInfo fi) as a load
// does, up to MaxFileSize.
func ReadOpened(f *os.File, fi fs.FileInfo) (string, *Result) { return readText(f, fi) }

// FreshDoc is the document of no state.
func FreshDoc() *value.Map { return freshDoc() }

// Invalid is the answer to a command that breaks a rule: ERROR, a fixed
// reason naming the field (never its value), nothing read or written.
func Invalid(field string, rule error) Result { return invalid(field, rule) }

// IOFailed is ERROR for an I/O failure whose cause is not at hand.
func IOFailed(reason string) Result { return errorResult(reason) }

// MapAt returns doc[k] as a map, setting an empty one when it is absent
// or not a map.
func MapAt(doc *value.Map, k string) *value.Map { return mapAt(doc, k) }

// SourcesOf returns doc's sources map, and whether it is one.
func SourcesOf(doc *value.Map) (*value.Map, bool) { return sourcesOf(doc) }

// GetMap is m[k] and whether it is a map.
func GetMap(m *value.Map, k string) (*value.Map, bool) { return getMap(m, k) }

// MapGet is m[k], nil when absent.
func MapGet(m *value.Map, k string) value.Value { return mapGet(m, k) }

// EvidenceFields are the fields one of which a closed item needs to stay
// closed (validate).
var EvidenceFields = evidenceFields

// Truthy is Python's truth of v.
func Truthy(v value.Value) bool { return truthy(v) }

// PyStr is Python's str() of v.
func PyStr(v value.Value) string { return pyStr(v) }

// CursorLess reports whether cursor a sorts before b as cursor-advance
// compares them.
func CursorLess(a, b string) bool { return cursorLess(a, b) }
