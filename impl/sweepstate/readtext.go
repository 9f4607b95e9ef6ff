package sweepstate

import (
	"io"

	"github.com/stateguard/stateguard/internal/yamlsubset"
)

// PayloadText is the JSON text of an answer's payload, in chunks.
type PayloadText struct{ chunks [][]byte }

// Len is the length of the text in bytes; 0 when there is none.
func (p PayloadText) Len() int {
	n := 0
	for _, c := range p.chunks {
		n += len(c)
	}
	return n
}

// WriteTo writes the text to w, chunk by chunk.
func (p PayloadText) WriteTo(w io.Writer) (int64, error) {
	var n int64
	for _, c := range p.chunks {
		m, err := w.Write(c)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadText answers Read as Run does, for a caller that prints the
// payload: when the file is in the form this engine writes (see
// yamlsubset.ReadJSON), an OK answer comes back with Result.Payload.Map
// nil and its payload as text, the bytes Payload.MarshalJSON would write
// for Run's answer, read from the file line by line without building the
// document. Otherwise text is empty and the answer is Run's, word, reason
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
		if chunks, ok := yamlsubset.ReadJSON(f, fi.Size(), MaxFileSize); ok {
			return Result{Word: WordOK}, PayloadText{chunks}
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
	res, _ = decide(input{loaded: st}, Read{})
	return res, PayloadText{}
}
