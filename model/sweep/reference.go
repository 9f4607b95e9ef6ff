package sweep

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stateguard/stateguard/model/value"
)

// This file models the reference (Python) engine's state-file grammar, the
// definition of the file format (spec/sweep-state.md §15.2.7): the bytes its
// writer produces for a document, and how its reader takes text of that
// grammar back. It shares nothing with internal/codec/yamlsubset, the engine's
// codec, so that tests can hold one against the other.

// ReferenceText returns the state file the reference writer produces for
// doc: keys in Canonical order, two spaces per level; a key bare whenever it
// matches ^[A-Za-z_][A-Za-z0-9_.-]*$ (the YAML 1.1 words included), else a
// JSON string; a non-empty map as a block; a list or an empty map as one
// line of json.dumps (sorted keys, NaN, Infinity, -Infinity for non-finite
// floats); every other value as the writer's scalar text, a float as repr
// (so nan, inf, -inf at block level). Strings are JSON strings with only
// '"', '\' and the C0 controls escaped, everything else raw.
//
// A key matching the pattern but for a trailing newline is divergence D4
// (the reference corrupts its own file); callers keep such keys out.
func ReferenceText(doc *value.Map) []byte {
	var b []byte
	return refBlock(b, Canonical(doc), 0)
}

// ReferenceReading is the document the reference reader gives for
// ReferenceText(doc): doc in Canonical order, with every non-finite float
// that stood at block level (not inside a list) turned into the string of
// its repr, as the reference reads a bare nan, inf or -inf.
func ReferenceReading(doc *value.Map) *value.Map {
	return refReadBack(Canonical(doc))
}

func refReadBack(m *value.Map) *value.Map {
	out := value.NewMapSize(m.Len())
	for i := range m.Len() {
		k, v := m.At(i)
		switch t := v.(type) {
		case *value.Map:
			if t.Len() > 0 {
				v = refReadBack(t)
			}
		case float64:
			if math.IsNaN(t) || math.IsInf(t, 0) {
				v = refFloat(t)
			}
		}
		out.Set(k, v)
	}
	return out
}

func refBlock(b []byte, m *value.Map, depth int) []byte {
	for i := range m.Len() {
		k, v := m.At(i)
		b = append(b, strings.Repeat("  ", depth)...)
		if refBareKey(k) {
			b = append(b, k...)
		} else {
			b = refString(b, k)
		}
		if child, ok := v.(*value.Map); ok && child.Len() > 0 {
			b = append(b, ":\n"...)
			b = refBlock(b, child, depth+1)
			continue
		}
		b = append(b, ": "...)
		if f, ok := v.(float64); ok {
			b = append(b, refFloat(f)...)
		} else {
			b = refJSON(b, v)
		}
		b = append(b, '\n')
	}
	return b
}

// refBareKey is the reference writer's bare-key test, without D4.
func refBareKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '.' || c == '-')) {
			return false
		}
	}
	return k != ""
}

// refFloat is Python's repr of a float.
func refFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return FloatRepr(f)
}

// refJSON appends json.dumps(v, ensure_ascii=False, sort_keys=True).
func refJSON(b []byte, v value.Value) []byte {
	switch t := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, t)
	case *big.Int:
		return t.Append(b, 10)
	case float64:
		switch {
		case math.IsNaN(t):
			return append(b, "NaN"...)
		case math.IsInf(t, 1):
			return append(b, "Infinity"...)
		case math.IsInf(t, -1):
			return append(b, "-Infinity"...)
		}
		return append(b, FloatRepr(t)...)
	case string:
		return refString(b, t)
	case []value.Value:
		b = append(b, '[')
		for i, e := range t {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = refJSON(b, e)
		}
		return append(b, ']')
	case *value.Map:
		sorted := reorder(t, nil)
		b = append(b, '{')
		for i := range sorted.Len() {
			k, e := sorted.At(i)
			if i > 0 {
				b = append(b, ", "...)
			}
			b = refString(b, k)
			b = append(b, ": "...)
			b = refJSON(b, e)
		}
		return append(b, '}')
	}
	panic("sweep: not a value")
}

// refString appends s as json.dumps(s, ensure_ascii=False).
func refString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch r {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			if r < 0x20 {
				b = append(b, `\u00`...)
				b = append(b, hex(int(r), 2)...)
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return append(b, '"')
}

// ReadReference reads text of the writer grammar the way the reference
// reader does: a line's indent is its leading spaces; "key:" with deeper
// lines after it opens a block, without them it is an empty map; a key is
// a JSON string when it starts with '"', else the text up to the colon; a
// value is null, true or false, a JSON text (json.loads: NaN, Infinity and
// -Infinity are floats wherever they stand) when it starts with '"', '[',
// '{', '-' or a digit, and otherwise the word itself (so nan, inf and -inf
// are strings). It reads both writers' output, the engine's quoted D8 keys
// and D6 escapes included; it is no general reader of hand edits and
// answers ok=false for text outside that grammar.
func ReadReference(text []byte) (doc *value.Map, ok bool) {
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	r := refReader{lines: lines}
	doc = r.block(0)
	return doc, !r.bad && r.pos == len(lines) && doc.Len() > 0
}

type refReader struct {
	lines []string
	pos   int
	bad   bool
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

func (r *refReader) block(indent int) *value.Map {
	m := value.NewMap()
	for r.pos < len(r.lines) && !r.bad {
		l := r.lines[r.pos]
		if indentOf(l) < indent {
			break
		}
		if indentOf(l) > indent {
			r.bad = true
			break
		}
		r.pos++
		key, rest, ok := refSplit(l[indent:])
		if !ok {
			r.bad = true
			break
		}
		if rest == "" {
			child := value.NewMap()
			if r.pos < len(r.lines) && indentOf(r.lines[r.pos]) > indent {
				child = r.block(indentOf(r.lines[r.pos]))
			}
			m.Set(key, child)
			continue
		}
		v, ok := refValue(rest)
		if !ok {
			r.bad = true
			break
		}
		m.Set(key, v)
	}
	return m
}

func refSplit(l string) (key, rest string, ok bool) {
	if strings.HasPrefix(l, `"`) {
		j := jsonReader{s: l}
		k, ok := j.str()
		if !ok || !strings.HasPrefix(l[j.i:], ":") {
			return "", "", false
		}
		return k, strings.TrimPrefix(l[j.i+1:], " "), true
	}
	key, rest, ok = strings.Cut(l, ":")
	return key, strings.TrimPrefix(rest, " "), ok
}

func refValue(s string) (value.Value, bool) {
	switch s {
	case "null":
		return nil, true
	case "true":
		return true, true
	case "false":
		return false, true
	case "nan", "inf", "-inf":
		return s, true
	}
	if c := s[0]; c == '"' || c == '[' || c == '{' || c == '-' || c >= '0' && c <= '9' {
		j := jsonReader{s: s}
		v, ok := j.value()
		return v, ok && j.i == len(s)
	}
	return s, true
}

// jsonReader is a small json.loads over the forms json.dumps writes.
type jsonReader struct {
	s string
	i int
}

func (j *jsonReader) lit(w string) bool {
	if strings.HasPrefix(j.s[j.i:], w) {
		j.i += len(w)
		return true
	}
	return false
}

func (j *jsonReader) value() (value.Value, bool) {
	if j.i >= len(j.s) {
		return nil, false
	}
	switch {
	case j.lit("null"):
		return nil, true
	case j.lit("true"):
		return true, true
	case j.lit("false"):
		return false, true
	case j.lit("NaN"):
		return math.NaN(), true
	case j.lit("Infinity"):
		return math.Inf(1), true
	case j.lit("-Infinity"):
		return math.Inf(-1), true
	}
	switch c := j.s[j.i]; {
	case c == '"':
		s, ok := j.str()
		return s, ok
	case c == '[':
		j.i++
		list := []value.Value{}
		if j.lit("]") {
			return list, true
		}
		for {
			v, ok := j.value()
			if !ok {
				return nil, false
			}
			list = append(list, v)
			if j.lit("]") {
				return list, true
			}
			if !j.lit(", ") {
				return nil, false
			}
		}
	case c == '{':
		j.i++
		m := value.NewMap()
		if j.lit("}") {
			return m, true
		}
		for {
			k, ok := j.str()
			if !ok || !j.lit(": ") {
				return nil, false
			}
			v, ok := j.value()
			if !ok {
				return nil, false
			}
			m.Set(k, v)
			if j.lit("}") {
				return m, true
			}
			if !j.lit(", ") {
				return nil, false
			}
		}
	}
	return j.number()
}

func (j *jsonReader) number() (value.Value, bool) {
	start := j.i
	float := false
	for j.i < len(j.s) {
		c := j.s[j.i]
		if c == '.' || c == 'e' || c == 'E' {
			float = true
		} else if !(c >= '0' && c <= '9' || c == '-' || c == '+') {
			break
		}
		j.i++
	}
	lit := j.s[start:j.i]
	if float {
		f, err := strconv.ParseFloat(lit, 64)
		return f, err == nil
	}
	n, ok := new(big.Int).SetString(lit, 10)
	return n, ok && lit != ""
}

// str reads a JSON string, escapes and surrogate pairs included.
func (j *jsonReader) str() (string, bool) {
	if !j.lit(`"`) {
		return "", false
	}
	var b strings.Builder
	for j.i < len(j.s) {
		c := j.s[j.i]
		switch {
		case c == '"':
			j.i++
			return b.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b.WriteByte(c)
			j.i++
			continue
		}
		if j.i+1 >= len(j.s) {
			return "", false
		}
		e := j.s[j.i+1]
		j.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, ok := j.hex4()
			if !ok {
				return "", false
			}
			if r >= 0xd800 && r < 0xdc00 && j.lit(`\u`) {
				lo, ok := j.hex4()
				if !ok || lo < 0xdc00 || lo > 0xdfff {
					return "", false
				}
				r = 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00)
			}
			b.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

func (j *jsonReader) hex4() (rune, bool) {
	if j.i+4 > len(j.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(j.s[j.i:j.i+4], 16, 32)
	j.i += 4
	return rune(n), err == nil
}
