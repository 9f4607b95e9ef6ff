// Package pyjson reads and writes JSON text the way the reference engines'
// Python json module does, over the exact values of package value.
//
// Its functions:
//
//	Decode(text string) (value.Value, error)
//	    json.loads semantics: surrounding whitespace allowed; integers exact at
//	    any size (*big.Int); a number with '.', 'e' or 'E' is a float64; a later
//	    duplicate key overwrites the value but keeps the first position.
//	    NaN, Infinity, -Infinity and floats that overflow to infinity are
//	    refused with ErrNonFinite (divergence D5). Any other malformed text is
//	    ErrSyntax (wrapped; errors.Is works).
//	DecodePrefix(text string, maxDepth int) (value.Value, int, error)
//	DecodeStringPrefix(text string) (string, int, error)
//	    One value (or one string) at the start of text and the bytes used.
//	DecodeFilePrefix(text string, maxDepth int) (value.Value, int, error)
//	    DecodePrefix for a state file's inline JSON: NaN, Infinity and
//	    -Infinity inside an array are floats (the reference writer puts them
//	    there); elsewhere they are refused as by Decode.
//	Encode(v value.Value) []byte
//	    json.dumps default: ensure_ascii (non-ASCII and DEL as \uXXXX, lowercase
//	    hex, surrogate pairs above U+FFFF), ", " and ": " separators, keys in
//	    map order, floats as FormatFloat.
//	EncodeTo(w io.Writer, v value.Value) error
//	    Encode's bytes, written to w in chunks.
//	FormatFloat(f float64) string
//	    Python repr of a float: shortest round-trip digits, exponent only when
//	    the decimal exponent is < -4 or >= 16, ".0" on integral values
//	    ("1.0", "1e+16", "1e-05", "-0.0", "123456789.0").
//
// Decisions where Python's behaviour cannot be carried over (spec/):
//   - A \uXXXX escape that leaves a lone surrogate (Python keeps it in the
//     str) is ErrSyntax: the string could never be written as UTF-8.
//   - Text that is not valid UTF-8 is ErrSyntax (Python never sees such text
//     as a str).
//   - An integer literal with more than MaxIntDigits digits is ErrSyntax, as
//     Python 3.11's int() refuses it (ValueError); it also bounds the cost of
//     big-number conversion.
//   - Nesting deeper than MaxDepth arrays/objects is ErrSyntax, where Python
//     raises RecursionError (just below 1000 levels).
//   - Encode writes each byte of an invalid UTF-8 sequence in a string as
//     \ufffd (value.Value does not enforce UTF-8; Python strings are always
//     valid text).
package pyjson

import "errors"

// ErrSyntax marks text that is not JSON.
var ErrSyntax = errors.New("pyjson: invalid JSON")

// ErrNonFinite marks NaN, Infinity or a float overflowing to infinity.
var ErrNonFinite = errors.New("pyjson: non-finite number")

// MaxIntDigits is the largest number of digits an integer literal may have,
// Python 3.11's default int_max_str_digits.
const MaxIntDigits = 4300

// MaxDepth is the deepest nesting of arrays and objects Decode accepts.
const MaxDepth = 990
