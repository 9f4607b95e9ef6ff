package yamlsubset

import (
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// AppendQuoted appends s as the file writes a string: a one-line JSON
// string with `"` and `\` escaped, \n \r \t \b \f short-escaped, the other
// characters below U+0020 as \u00XX, and (divergence D6) DEL, the C1
// controls U+0080-U+009F, U+2028, U+2029, U+FFFE and U+FFFF as \uXXXX with
// lowercase hex. Everything else, other non-ASCII included, is written raw
// as UTF-8. A byte that is not part of valid UTF-8 is written as U+FFFD.
func AppendQuoted(dst []byte, s string) []byte {
	return appendQuoted(dst, s, true)
}

// appendQuoted is AppendQuoted, with the characters of divergence D6
// escaped when d6 is set and raw when it is not, as the reference writer
// writes them.
func appendQuoted(dst []byte, s string, d6 bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; ; {
		if i = pyjson.SkipRawASCII(s, i); i >= len(s) {
			break
		}
		c := s[i]
		if c == 0x7f && !d6 {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			dst = pyjson.AppendEscapedRune(dst, rune(c))
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = utf8.AppendRune(dst, utf8.RuneError)
		case d6 && needsEscape(r):
			dst = append(dst, s[start:i]...)
			dst = pyjson.AppendEscapedRune(dst, r)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// needsEscape reports the non-ASCII characters of divergence D6: YAML
// forbids them raw or a YAML 1.1 reader folds them (U+0085, U+2028, U+2029).
func needsEscape(r rune) bool {
	return (r >= 0x80 && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == 0xfffe || r == 0xffff
}

// IsBareKey reports whether the writer puts key in the file without quotes:
// it fully matches ^[A-Za-z_][A-Za-z0-9_.-]*$ (so a trailing newline does
// not pass, divergence D4) and is not one of the YAML 1.1 boolean and null
// words of divergence D8.
func IsBareKey(key string) bool {
	return isBareWord(key) && !isYAML11Word(key)
}

// isBareWord reports whether s fully matches ^[A-Za-z_][A-Za-z0-9_.-]*$.
func isBareWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// bareColon returns the index of the first ':' in s when the text before
// it fully matches ^[A-Za-z_][A-Za-z0-9_.-]*$ (isBareWord), else -1: the
// key of an entry line and its colon in one pass.
func bareColon(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		case c == ':' && i > 0:
			return i
		default:
			return -1
		}
	}
	return -1
}

// isYAML11Word reports the exact spellings a YAML 1.1 reader takes as a
// boolean or null (divergence D8).
func isYAML11Word(s string) bool {
	switch s {
	case "y", "Y", "yes", "Yes", "YES",
		"n", "N", "no", "No", "NO",
		"true", "True", "TRUE",
		"false", "False", "FALSE",
		"on", "On", "ON",
		"off", "Off", "OFF",
		"null", "Null", "NULL":
		return true
	}
	return false
}
