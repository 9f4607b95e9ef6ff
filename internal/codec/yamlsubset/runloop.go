package yamlsubset

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"

	"github.com/stateguard/stateguard/internal/codec/pyjson"
)

// lines is what the one loop over the usual lines of a block (runLines)
// keeps from one call to the next, for either scanner: the open blocks,
// the engine's load rules and the shape of the last block it opened.
type lines struct {
	blocks
	rules ruleSet
	// The short keys of the lines of the last block runLines opened and
	// read, in order (scanShape): copies of the text's bytes, not views
	// of the window. Every block the loop opens is of levelItem (two or
	// more levels down), so a shape's ranks hold in any of them.
	shape    [maxShape]scanShape
	shapeLen int
}

// sinkKind is the sink runLines is compiled for: toJSON (ReadJSON's
// transcoder) or toSplit (the canonical scan). The two are of different
// sizes, so each instantiation of runLines is compiled on a shape of its
// own, in which the size, and every branch on the sink, is a constant:
// each sink gets the loop with only its own branches, as if written for
// it. (A method of the type parameter would be called through the
// instantiation's dictionary, an indirect call on every line; a type
// switch on it would read the dictionary too.)
type sinkKind interface{ toJSON | toSplit }

type (
	toJSON  [1]byte
	toSplit [2]byte
)

// runLines reads, from offset p of the window w (which ends in "\n"), the
// run of usual lines that follow in the block the last line opened or
// was in, as the scanner's next would one by one, and returns the offset
// of the first line it leaves to next. It serves both scanners: K says
// whose sink it writes to, js (toJSON: ReadJSON's transcoder, each line's
// JSON text appended to its output) or cs (toSplit: the canonical scan,
// the items entries opened and closed); the other is nil, and s is the
// scanner's lines. Where the two differ (the values each takes as they
// are, what a line writes) a branch on json decides, which the compiler
// resolves in each instantiation (sinkKind).
//
// A usual line is, at the block's indent, a bare key (for cs not a YAML
// 1.1 word) or a quoted one of raw printable ASCII (for cs not a bare
// key), then ":" and nothing, which opens a block below, or ": " and a
// value the sink takes as it is (a string of raw printable ASCII found in
// one pass, or for js one verbatim takes, for cs one canonicalValue
// takes); or, one level up and not right after a `key:`, such a key and
// ":", which closes the block and opens its next sibling (in items, for
// cs, the next entry: the one it closes goes to endEntry); or, two or
// more levels down and not right after a `key:`, a line further up,
// which closes the blocks below its own. Blocks below depth 1 (js) or 2
// (cs) are read here; the top level, where the load rules apply, and for
// cs the entries of items are next's. Any other line, or a key out of
// order, ends the run unread: next then reads it, or declines. For cs
// every line of a run belongs to an entry of items exactly when the scan
// is in items, so inEntry is the same for all of them.
//
// A line that begins with the key the block's last sibling had at the
// same place (scanShape) is taken for that key without the key's scan,
// rank and order check, which that key passed there. For js, such lines
// are written by shapedLines, whose loop keeps only what they need; for
// cs, a short line the same to its "\n" as the one that sibling had there
// is taken whole, its value too (a line that is not is then read as any
// other, and not compared again while the shape holds).
func runLines[K sinkKind](s *lines, w string, p int, js *transcoder, cs *canonicalScan) int {
	var kind K
	json := unsafe.Sizeof(kind) == unsafe.Sizeof(toJSON{})
	d := len(s.open) - 1
	if d < 2 && (d < 1 || !json) {
		return p
	}
	parent := &s.open[d-1]
	ind := 2 * d
	b := s.open[d]
	lvl, lastRank, lastKey, any := b.level, b.lastRank, b.lastKey, b.any
	opening := s.opening
	rules := &s.rules
	// pos is the line's place in its block, and onShape says the lines
	// before it there had the keys s.shape holds (from a block's first
	// line on: only after this call opened the block).
	shape := &s.shape
	shapeLen, pos, onShape := s.shapeLen, 0, false
	// A shape's whole line is kept for the canonical scan only (0: to
	// be kept when the key comes again).
	lineInit := uint8(0)
	var buf []byte
	if json {
		buf, lineInit = js.buf, scanLineOff
	}
	for p < len(w) {
		if json && onShape && pos < shapeLen && ind < 8 {
			// The lines the shape foretells, in a loop of their own.
			np, nbuf, npos, lastQ := shapedLines(w, p, buf, shape, shapeLen, pos, ind)
			if npos > pos {
				sk := &shape[npos-1]
				lastRank, lastKey, any = sk.rank, w[lastQ:lastQ+sk.n], true
				opening = false
				p, buf, pos = np, nbuf, npos
				if chunkFull(buf) {
					js.buf = buf
					js.newChunk()
					buf = js.buf
				}
				continue
			}
		}
		// The indent, its first eight bytes in one step: a loop over the
		// spaces would end after two, four or six of them, a different
		// count from line to line that the processor cannot predict.
		start, q := p, p
		if p+8 <= len(w) {
			q += bits.TrailingZeros64(load64(w, p)^spaces8) >> 3
		}
		for w[q] == ' ' {
			q++
		}
		// The key, k the offset of its colon, and its rank.
		var key string
		var k, r int
		quoted, predicted, keepLine := false, false, false
		if q-p == ind && onShape && pos < shapeLen && q+8 <= len(w) {
			if sk := &shape[pos]; sk.foretells(w, q) {
				key, k, r, predicted = w[q:q+sk.n], q+sk.n, sk.rank, true
				switch n := int(sk.lineLen); n {
				case 0:
					keepLine = true // once its value passed
				case scanLineOff:
				default:
					if p+n <= len(w) && w[p:p+n] == string(sk.line[:n]) {
						// The whole line the block's last sibling had
						// here, which passed: its value too.
						lastRank, lastKey, any = r, key, true
						opening = false
						p += n
						pos++
						continue
					}
					sk.lineLen = scanLineOff // the line varies
				}
			}
		}
		if !predicted {
			var usual bool
			key, k, quoted, usual = usualKey(w, q)
			if !usual || rules.rewrites(key) {
				goto end
			}
			// Emit quotes a YAML 1.1 word and writes any other bare key
			// bare; Parse reads either way (js).
			if !json && (quoted && IsBareKey(key) || !quoted && isYAML11Word(key)) {
				goto end
			}
			if q-p != ind && (q-p != ind-2 || opening || w[k+1] != '\n') {
				// A line further up (not right after a `key:`, two or
				// more levels down) closes the blocks below its own.
				nd := (q - p) / 2
				if q-p > ind || (q-p)%2 != 0 || nd < 2 || opening {
					goto end
				}
				if json {
					for range d - nd {
						buf = append(buf, '}')
					}
				}
				s.open = s.open[:nd+1]
				d, ind = nd, 2*nd
				parent = &s.open[d-1]
				b := s.open[d]
				lvl, lastRank, lastKey, any = b.level, b.lastRank, b.lastKey, b.any
				onShape = false
			}
			if q-p != ind {
				// The next sibling of the block, one level up (not at
				// the top level: next's).
				if d < 2 {
					goto end
				}
				r := rank(parent.level, key)
				if !sortsAfter(key, r, parent.lastKey, parent.lastRank) {
					goto end
				}
				// parent.any holds: the block being closed is one of its entries.
				parent.lastRank, parent.lastKey = r, key
				if json {
					buf = append(buf, "}, "...)
					buf = appendKey(buf, w[q:k], key, quoted)
					buf = append(buf, ": {"...)
				} else if cs.inItems && d == 2 {
					at := cs.base + p
					cs.endEntry(at)
					cs.entryStart, cs.entryKey = at, key
				}
				lvl, lastRank, lastKey, any = childLevel(parent.level, key), 0, "", false
				opening = true
				p = k + 2
				pos, onShape = 0, true
				continue
			}
			if lvl == levelItem {
				r = itemRank(key)
			} else {
				r = rank(lvl, key)
			}
			if any && !sortsAfter(key, r, lastKey, lastRank) {
				goto end
			}
		}
		if w[k+1] == '\n' {
			// `key:`, which opens a block below.
			if d+1 >= transcodeMaxDepth {
				goto end
			}
			if json {
				if any {
					buf = append(buf, ',', ' ')
				}
				buf = appendKey(buf, w[q:k], key, quoted)
				buf = append(buf, ": {"...)
			}
			s.open[d] = openBlock{level: lvl, lastRank: r, lastKey: key, any: true}
			s.open = append(s.open, openBlock{level: childLevel(lvl, key)})
			d, ind = d+1, ind+2
			parent = &s.open[d-1]
			lvl, lastRank, lastKey, any = s.open[d].level, 0, "", false
			opening = true
			p = k + 2
			onShape = false
			continue
		}
		if w[k+1] != ' ' {
			goto end
		}
		// The value, which ends at e (its "\n").
		{
			e := 0
			v := k + 2
			if !json {
				if w[v] == '"' {
					if j := pyjson.RawStringEnd(w, v+1); j >= 0 && w[j+1] == '\n' {
						e = j + 1
						goto taken
					}
				}
				// Not raw ASCII to its end: judged as entry judges it.
				e = v + strings.IndexByte(w[v:], '\n')
				if !canonicalValue(w[v:e]) {
					goto end
				}
				goto taken
			}
			if w[v] == '"' && !quoted && len(buf)+len(key)+24 <= cap(buf) {
				// The usual line, a bare key and a string: its text is
				// written into the room the chunk has while the string
				// is judged (CopyPlain); what that leaves, near the end
				// of the window or of the chunk, is read as below.
				out := buf[:cap(buf)]
				o := len(buf)
				if any {
					out[o], out[o+1] = ',', ' '
					o += 2
				}
				out[o] = '"'
				if len(key) <= 8 && q+8 <= len(w) {
					binary.LittleEndian.PutUint64(out[o+1:], load64(w, q))
					o += len(key) + 1
				} else {
					o += copy(out[o+1:], key) + 1
				}
				out[o], out[o+1], out[o+2], out[o+3] = '"', ':', ' ', '"'
				o += 4
				n, stopped := pyjson.CopyPlain(out[o:], w[v+1:])
				j := v + 1 + n
				if !stopped {
					j = pyjson.RawStringEnd(w, j)
				}
				if j < 0 || w[j] != '"' || w[j+1] != '\n' {
					goto end
				}
				if stopped {
					buf = out[:o+n+1]
				} else {
					buf = append(out[:o+n], w[v+1+n:j+1]...)
				}
				e = j + 1
				goto taken
			}
			if w[v] == '"' {
				j := pyjson.RawStringEnd(w, v+1)
				if j < 0 || w[j+1] != '\n' {
					goto end
				}
				e = j + 1
			} else {
				e = v + strings.IndexByte(w[v:], '\n')
				if !verbatim(w[v:e]) {
					goto end
				}
			}
			if any {
				buf = append(buf, ',', ' ')
			}
			buf = appendKey(buf, w[q:k], key, quoted)
			buf = append(buf, w[k:e]...)
		taken:
			lastRank, lastKey, any = r, key, true
			opening = false
			p = e + 1
		}
		if keepLine {
			// A line its key's shape took, the second time the shape
			// holds that key here: kept whole, if it is short, to be
			// compared in the siblings after it.
			sk := &shape[pos]
			sk.lineLen = scanLineOff
			if n := p - start; n <= len(sk.line) {
				sk.lineLen = uint8(copy(sk.line[:], w[start:p]))
			}
		}
		if onShape && !predicted {
			// A line whose key the shape did not have: from here on the
			// shape is this block's, if the key is short enough.
			if quoted || len(key) >= 8 || q+8 > len(w) || pos >= maxShape {
				onShape = false
			} else {
				sk := &shape[pos]
				sk.shapeKey, sk.lineLen = shapeOf(w, q, len(key), r), lineInit
				shapeLen = pos + 1
			}
		}
		pos++
		if json && chunkFull(buf) {
			js.buf = buf
			js.newChunk()
			buf = js.buf
		}
	}
end:
	// (With p at the line's start nothing changed but the blocks a line
	// further up closed, as enter closes them for it.)
	s.shapeLen = shapeLen
	s.open[d] = openBlock{level: lvl, lastRank: lastRank, lastKey: lastKey, any: any}
	s.opening = opening
	if json {
		js.buf = buf
	} else {
		cs.inEntry = cs.inItems
	}
	return p
}

// scanShape is a shapeKey of a block two or more levels down (every block
// runLines opens is of levelItem, so the rank is the same in each), with
// the whole line it was read on when it is short (for the canonical scan:
// ReadJSON's shapes have none): the lines of an item that are the same in
// every item (its source, often its status and its labels) are then taken
// without reading their values.
type scanShape struct {
	shapeKey
	// The whole line, its indent and "\n" included, of the second sibling
	// that had the key here, when it is short, which passed every check
	// there, its value's too: a line the same to the byte is taken at
	// once. lineLen 0: none yet; scanLineOff: none (too long, or a line
	// that was not the same came since).
	line    [scanLineMax]byte
	lineLen uint8
}

// scanLineMax bounds the lines scanShape keeps whole, and scanLineOff
// marks a shape's key whose lines are not compared whole.
const scanLineMax, scanLineOff = 48, 255

// appendKey writes a line's key as JSON: a quoted key's own text (raw
// printable ASCII, so its YAML quotes are JSON's), a bare key in quotes.
func appendKey(buf []byte, quotedText, key string, quoted bool) []byte {
	if quoted {
		return append(buf, quotedText...)
	}
	buf = append(buf, '"')
	buf = append(buf, key...)
	return append(buf, '"')
}
