package yamlsubset

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/model/value"
)

// maxDepth bounds block nesting plus the inline JSON inside it. It is well
// above pyjson.MaxDepth plus the two levels items sit at, so every document
// Emit writes from decoded input reads back.
const maxDepth = 2000

// Parse reads a state document (spec/sweep-state.md §15.2).
//
// Layout rules:
//   - Line ends are "\n", "\r\n" or a lone "\r" (so a raw CR inside a quoted
//     string splits it and the line is CORRUPT).
//   - A line holding only spaces and tabs is blank; a line whose first
//     non-space character is '#' is a comment; both are ignored.
//   - The indent is the count of leading spaces; a tab right after them is
//     CORRUPT.
//   - The first significant line sets the top indent. A line shallower than
//     that is dropped alone and reading goes on (divergence D12: the
//     reference stops there and loses the rest). A line deeper than the
//     block it would belong to (after "key: value", or past the indent its
//     block's first line set) is dropped too. Dropped lines are not
//     otherwise inspected, as in the reference.
//   - `key:` opens a block mapping whose indent is that of the next line; if
//     the next line is not deeper, the value is an empty map.
//   - A later duplicate key overwrites the value and keeps the first position.
//
// The input must be valid UTF-8 and must not start with a byte-order mark.
// Every error wraps ErrCorrupt: besides those two, a line without a colon,
// a JSON value that does not parse or has trailing text, a tab in the
// indentation, a raw CR inside a quoted string, an ambiguous unquoted
// scalar, and a document whose top level is not a non-empty mapping (a file
// of comments only). Parse does not check schema_version or the shape of
// items and sources (the engine does), and is never given whitespace-only
// text (the engine's NO-STATE).
func Parse(data []byte) (*value.Map, error) {
	return ParseString(string(data))
}

// ParseString is Parse for text already held as a string. Keys and strings
// without escapes in the result are substrings of text (no copies), so the
// document keeps text alive.
func ParseString(text string) (*value.Map, error) {
	if strings.HasPrefix(text, "\xef\xbb\xbf") {
		return nil, fmt.Errorf("%w: byte-order mark", ErrCorrupt)
	}
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("%w: not valid UTF-8", ErrCorrupt)
	}
	p := parser{rest: text, lf: -1}
	first, ok, err := p.peek()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no mapping", ErrCorrupt)
	}
	for {
		ln, ok, err := p.peek()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if ln.indent < first.indent {
			p.take() // shallower than the first line: dropped
			continue
		}
		if err := p.block(first.indent, 1); err != nil {
			return nil, err
		}
	}
	return p.takeMap(1), nil
}

// line is one significant (not blank, not comment) line.
type line struct {
	indent  int
	content string // after the indent, no line end
	number  int    // 1-based, for error messages
}

// parser walks the text line by line with one line of lookahead, so no
// slice of all lines is ever built.
type parser struct {
	rest    string
	lf      int // index in rest of the next '\n' (len(rest) if none), or -1 when unknown
	lineNo  int
	pending line
	has     bool
	// keys[depth] and vals[depth] gather the entries of the open block at
	// that depth, so each map is built once at its final size (reused
	// across siblings).
	keys [][]string
	vals [][]value.Value
	// arena holds the document's maps, lists, integers and boxed scalars
	// in shared blocks: a few allocations per block instead of several per
	// item.
	arena value.Arena
}

// takeMap builds the map of the entries gathered at depth and clears them.
func (p *parser) takeMap(depth int) *value.Map {
	if depth >= len(p.keys) {
		return p.arena.NewMapSize(0)
	}
	keys, vals := p.keys[depth], p.vals[depth]
	m := p.arena.MapOf(keys, vals) // a later duplicate overwrites in place
	clear(keys)
	clear(vals)
	p.keys[depth], p.vals[depth] = keys[:0], vals[:0]
	return m
}

func (p *parser) add(depth int, key string, v value.Value) {
	for len(p.keys) <= depth {
		p.keys = append(p.keys, nil)
		p.vals = append(p.vals, nil)
	}
	p.keys[depth] = append(p.keys[depth], key)
	p.vals[depth] = append(p.vals[depth], v)
}

// peek returns the next significant line without consuming it.
func (p *parser) peek() (line, bool, error) {
	if p.has {
		return p.pending, true, nil
	}
	for len(p.rest) > 0 {
		raw := p.nextRawLine()
		n := 0
		for n < len(raw) && raw[n] == ' ' {
			n++
		}
		if n == len(raw) || raw[n] == '#' {
			continue
		}
		if raw[n] == '\t' {
			if strings.Trim(raw, " \t") == "" {
				continue // whitespace-only line
			}
			return line{}, false, corruptf(p.lineNo, "tab in indentation")
		}
		p.pending = line{indent: n, content: raw[n:], number: p.lineNo}
		p.has = true
		return p.pending, true, nil
	}
	return line{}, false, nil
}

func (p *parser) take() { p.has = false }

// nextRawLine cuts the next line off p.rest, accepting \n, \r\n and \r.
// The position of the next '\n' is remembered so that a file with CR-only
// line ends is still read in linear time.
func (p *parser) nextRawLine() string {
	p.lineNo++
	s := p.rest
	if p.lf < 0 {
		p.lf = strings.IndexByte(s, '\n')
		if p.lf < 0 {
			p.lf = len(s)
		}
	}
	end, next := p.lf, p.lf+1
	if cr := strings.IndexByte(s[:end], '\r'); cr >= 0 {
		end, next = cr, cr+1
		if next == p.lf {
			next++ // CRLF
		}
	}
	if next > len(s) {
		next = len(s)
	}
	p.rest = s[next:]
	if p.lf -= next; p.lf < 0 {
		p.lf = -1 // consumed: find the next one on the next call
	}
	return s[:end]
}

// block gathers the entries of the lines at exactly indent into
// p.entries[depth], until a shallower line or the end; deeper stray lines
// are dropped. The caller builds the map with takeMap.
func (p *parser) block(indent, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nesting too deep", ErrCorrupt)
	}
	for {
		ln, ok, err := p.peek()
		if err != nil || !ok || ln.indent < indent {
			return err
		}
		p.take()
		if ln.indent > indent {
			continue // deeper than any parent: dropped
		}
		key, rest, err := splitKey(ln)
		if err != nil {
			return err
		}
		if rest == "" {
			next, ok, err := p.peek()
			if err != nil {
				return err
			}
			if ok && next.indent > indent {
				if err := p.block(next.indent, depth+1); err != nil {
					return err
				}
			}
			p.add(depth, key, p.takeMap(depth+1))
			continue
		}
		v, err := parseValueIn(rest, maxDepth-depth, ln.number, &p.arena)
		if err != nil {
			return err
		}
		p.add(depth, key, v)
	}
}

// splitKey splits a line into its key and the value text after ": " (empty
// when the line opens a block). The separator must be ':' followed by a
// space, a tab or the line end, as every YAML reader requires.
func splitKey(ln line) (key, rest string, err error) {
	c := ln.content
	var after string
	if c[0] == '"' {
		k, n, err := pyjson.DecodeStringPrefix(c)
		if err != nil {
			return "", "", corruptf(ln.number, "bad quoted key")
		}
		key = k
		// The colon must follow the closing quote at once: the reference
		// refuses `"k" : v` as CORRUPT, and so does this reader.
		after = c[n:]
		if !strings.HasPrefix(after, ":") {
			return "", "", corruptf(ln.number, "no colon right after quoted key")
		}
		after = after[1:]
	} else {
		i := strings.IndexByte(c, ':')
		if i < 0 {
			return "", "", corruptf(ln.number, "line without a colon")
		}
		key, after = c[:i], c[i+1:]
		if !isPlainKey(key) {
			return "", "", corruptf(ln.number, "ambiguous unquoted key")
		}
	}
	if after != "" && after[0] != ' ' && after[0] != '\t' {
		return "", "", corruptf(ln.number, "no space after colon")
	}
	return key, trimBlanks(after), nil
}

// trimBlanks is strings.Trim(s, " \t") without building a cutset per call
// (it runs once per line).
func trimBlanks(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// parseValue reads the text after "key: ".
func parseValue(s string, depthLeft, lineNo int) (value.Value, error) {
	return parseValueIn(s, depthLeft, lineNo, nil)
}

// parseValueIn is parseValue with the value's parts taken from a (nil:
// each allocated on its own).
func parseValueIn(s string, depthLeft, lineNo int, a *value.Arena) (value.Value, error) {
	switch s {
	case "null":
		return nil, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "nan", "inf", "-inf":
		// The reference writer's repr of a non-finite float; its reader
		// takes the word back as a string.
		return a.String(s), nil
	}
	switch c := s[0]; {
	case c == '"': // the common case, without the general decoder
		str, n, err := pyjson.DecodeStringPrefix(s)
		if err != nil {
			return nil, corruptf(lineNo, "bad JSON value")
		}
		if n != len(s) {
			return nil, corruptf(lineNo, "text after a JSON value")
		}
		return a.String(str), nil
	case c == '[' || c == '{' || c == '-' || (c >= '0' && c <= '9'):
		v, n, err := pyjson.DecodeFilePrefixIn(s, depthLeft, a)
		if err != nil {
			return nil, corruptf(lineNo, "bad JSON value")
		}
		if n != len(s) {
			return nil, corruptf(lineNo, "text after a JSON value")
		}
		return v, nil
	}
	if isPlainValue(s) {
		return a.String(s), nil
	}
	return nil, corruptf(lineNo, "ambiguous unquoted scalar")
}

// isPlainValue is the rule for an unquoted value word that the file keeps as
// a string: only where every YAML reader would read the same string too.
// It is accepted iff it passes isPlainWord and, in any mix of case, it is
// none of y, yes, n, no, true, false, on, off, null (the YAML 1.1 booleans
// and null; other case mixes are strings to YAML but are refused to stay on
// the safe side), nor nan, inf, infinity (which the reference's number
// reading could take for a non-finite float). Everything else that is not
// null/true/false/a JSON number, string, object or array is ambiguous and
// the file is CORRUPT.
func isPlainValue(s string) bool {
	if !isPlainWord(s) {
		return false
	}
	if len(s) <= len("infinity") {
		switch strings.ToLower(s) {
		case "y", "yes", "n", "no", "true", "false", "on", "off", "null", "nan", "inf", "infinity":
			return false
		}
	}
	return true
}

// isPlainKey is the rule for a bare key. A key matching the reference
// writer's bare-key pattern is that writer's own form and always reads as
// itself, a YAML 1.1 word (y, No, OFF, null) included. Any other bare key is
// a hand edit: it must pass isPlainWord (after its trailing spaces, which
// the key keeps, are set aside) and must not be one of the exact YAML 1.1
// boolean and null spellings of divergence D8.
func isPlainKey(s string) bool {
	if isBareWord(s) {
		// The reference writer puts every key of this shape bare, the
		// YAML 1.1 words among them, and reads it back as that string.
		return true
	}
	s = strings.TrimRight(s, " ")
	return isPlainWord(s) && !isYAML11Word(s)
}

// isPlainWord is the shape every unquoted word must have, after trimming
// spaces:
//   - it is not empty;
//   - its first character is an ASCII letter, '_' or '/' (this excludes
//     numbers, dates, '~', '-', '+', '.', quotes and every YAML indicator);
//   - it contains no " #" (a comment) and no ": " and does not end in ':'
//     (a nested mapping);
//   - it contains no control character, tab, DEL, C1 control, U+2028,
//     U+2029, U+FEFF, U+FFFE or U+FFFF (forbidden raw, or line breaks to a
//     YAML 1.1 reader);
//   - it neither starts nor ends with a Unicode space (U+00A0, U+3000, ...).
func isPlainWord(s string) bool {
	s = strings.Trim(s, " ")
	if s == "" {
		return false
	}
	c := s[0]
	if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '/') {
		return false
	}
	if strings.Contains(s, " #") || strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || needsEscape(r) || r == 0xfeff {
			return false
		}
	}
	// The reference strips every Unicode space (str.strip) where this
	// reader strips only spaces and tabs: a word that starts or ends with
	// another one (U+00A0, U+3000) would read differently, so it is refused.
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return !unicode.IsSpace(first) && !unicode.IsSpace(last)
}

func corruptf(lineNo int, what string) error {
	return fmt.Errorf("%w: line %d: %s", ErrCorrupt, lineNo, what)
}
