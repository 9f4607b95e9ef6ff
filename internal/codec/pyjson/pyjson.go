// Package pyjson reads and writes JSON text the way the reference engines'
// Python json module does, over the exact values of package value.
//
// Decoding follows json.loads: integers exact at any size, a number with
// '.', 'e' or 'E' a float64, a later duplicate key overwriting the value in
// the first key's place. Encoding follows json.dumps with its defaults:
// ASCII only, ", " and ": " separators, keys in map order, floats as
// Python's repr. The readers of a state file's text (the YAML subset) take
// values from the start of a longer text (the Prefix functions), and the
// fast paths judge and copy plain string bytes sixteen at a time.
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
