package sweepstate

import (
	"io/fs"
	"os"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/model/value"
)

// The merge reads and checks its three inputs by the rules every command's
// load applies, and answers as the commands answer: these are the
// engine core's, under the names the merge's code uses.

// loaded is a state document after a successful load.
type loaded struct{ doc *value.Map }

func loadText(text string) (loaded, *Result) {
	doc, failed := sweepcore.LoadText(text)
	return loaded{doc}, fromCorePtr(failed)
}

func open(path string) (*os.File, fs.FileInfo, *Result) {
	f, fi, failed := sweepcore.Open(path)
	return f, fi, fromCorePtr(failed)
}

func readText(f *os.File, fi fs.FileInfo) (string, *Result) {
	text, failed := sweepcore.ReadOpened(f, fi)
	return text, fromCorePtr(failed)
}

// fromCorePtr is fromCore of a failure, nil for none.
func fromCorePtr(failed *sweepcore.Result) *Result {
	if failed == nil {
		return nil
	}
	res := fromCore(*failed)
	return &res
}

func ok(payload *value.Map) Result { return Result{Word: WordOK, Payload: Payload{payload}} }

func invalid(field string, rule error) Result { return fromCore(sweepcore.Invalid(field, rule)) }

func errorResult(reason string) Result { return fromCore(sweepcore.IOFailed(reason)) }

func freshDoc() *value.Map                             { return sweepcore.FreshDoc() }
func renameLegacyEvidence(items *value.Map)            { sweepcore.RenameLegacyEvidence(items) }
func mapAt(doc *value.Map, k string) *value.Map        { return sweepcore.MapAt(doc, k) }
func sourcesOf(doc *value.Map) (*value.Map, bool)      { return sweepcore.SourcesOf(doc) }
func getMap(m *value.Map, k string) (*value.Map, bool) { return sweepcore.GetMap(m, k) }
func mapGet(m *value.Map, k string) value.Value        { return sweepcore.MapGet(m, k) }
func truthy(v value.Value) bool                        { return sweepcore.Truthy(v) }
func pyStr(v value.Value) string                       { return sweepcore.PyStr(v) }
func cursorLess(a, b string) bool                      { return sweepcore.CursorLess(a, b) }

var evidenceFields = sweepcore.EvidenceFields
