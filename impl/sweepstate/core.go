package sweepstate

import (
	"io/fs"
	"os"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/model/value"
)

// The merge reads and checks its three inputs by the rules every command's
// load applies, and answers as the commands answer: the engine core's
// functions, with their answers as this package's Result.

// loadText checks and parses a state file's text as every load does.
func loadText(text string) (*value.Map, *Result) {
	doc, failed := sweepcore.LoadText(text)
	return doc, fromCorePtr(failed)
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
