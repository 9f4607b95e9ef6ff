package sweepstate

import (
	"io"

	"github.com/stateguard/stateguard/internal/engine/sweepcore"
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
	r, t := sweepcore.ReadText(path)
	return fromCore(r), PayloadText{t}
}
