package sweepstate

import (
	"io"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/engine/sweepargs"
	"github.com/stateguard/stateguard/internal/storage/outtext"
)

// PayloadText is the JSON text of an answer's payload. The zero value is
// no text.
type PayloadText struct{ text *outtext.Text }

// Len is the length of the text in bytes; 0 when there is none.
func (p PayloadText) Len() int { return p.text.Len() }

// WriteTo writes the text to w. In the sweep-state command, whose process
// ends after one call, the text's large chunks go into a pipe (an *os.File,
// on Linux) by reference rather than by copy; in any other program they
// are copied.
func (p PayloadText) WriteTo(w io.Writer) (int64, error) { return p.text.WriteTo(w) }

// ReadText answers Read as Run does, for a caller that prints the
// payload: when the file is in the form this engine writes (its own
// emitter's layout, spec/sweep-state.md §19.2), an OK answer comes back
// with no Result.Payload and its payload as text, the bytes
// Payload.MarshalJSON would write for Run's answer, read from the file
// line by line without building the document. Otherwise text is empty and the answer is Run's, word, reason
// and payload. Either way the answer is the one Run gives
// (FuzzReadText).
func (e *Engine) ReadText(path string) (res Result, text PayloadText) {
	f, fi, failed := open(path)
	if failed != nil {
		return *failed, PayloadText{}
	}
	if f == nil {
		return Result{Word: WordNoState}, PayloadText{}
	}
	defer f.Close()
	if fi.Size() <= MaxFileSize {
		if text, ok := yamlsubset.ReadJSON(f, fi.Size(), MaxFileSize); ok {
			return Result{Word: WordOK}, PayloadText{text}
		}
		// Not this engine's text: read it again the general way, from
		// the same descriptor (the same file, whatever was renamed over
		// the path meanwhile).
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return *corrupt("the state file cannot be read"), PayloadText{}
		}
	}
	st, failed := loadFrom(f, fi)
	if failed != nil {
		return *failed, PayloadText{}
	}
	res, _ = decide(input{loaded: st}, sweepargs.Read{})
	return res, PayloadText{}
}
