package sweepcore

import (
	"io"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/storage/outtext"
)

// ReadText answers Read as Run does, for a caller that prints the
// payload: when the file is in the form this engine writes (its own
// emitter's layout, spec/sweep-state.md §19.2), an OK answer comes back
// with no Result.Payload and its payload as text, the bytes the payload's
// line would hold, read from the file line by line without building the
// document. Otherwise text is nil and the answer is Run's, word, reason
// and payload. Either way the answer is the one Run gives (FuzzReadText).
func ReadText(path string) (res Result, text *outtext.Text) {
	f, fi, failed := open(path)
	if failed != nil {
		return *failed, nil
	}
	if f == nil {
		return Result{Word: WordNoState}, nil
	}
	defer f.Close()
	if way, _ := loadPlan(Read{}, legacyFile{}); way == jsonText && fi.Size() <= MaxFileSize {
		if text, ok := yamlsubset.ReadJSON(f, fi.Size(), MaxFileSize, sweeprules.StateLoad()); ok {
			return Result{Word: WordOK}, text
		}
		// Not this engine's text: read it again the general way, from
		// the same descriptor (the same file, whatever was renamed over
		// the path meanwhile).
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return *corrupt("the state file cannot be read"), nil
		}
	}
	st, failed := loadFrom(f, fi)
	if failed != nil {
		return *failed, nil
	}
	res, _ = decide(input{loaded: st}, Read{})
	return res, nil
}
