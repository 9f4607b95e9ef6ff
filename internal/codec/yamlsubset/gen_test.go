package yamlsubset_test

import (
	"math"
	"math/big"
	"unicode"

	"github.com/stateguard/stateguard/model/value"
	"pgregory.net/rapid"
)

// awkwardRunes covers ASCII with its controls, DEL, the C1 controls and
// Latin-1, the separators U+2028/U+2029, the BOM, U+FFFE/U+FFFF, CJK and
// astral characters.
var awkwardRunes = &unicode.RangeTable{
	R16: []unicode.Range16{
		{Lo: 0x0000, Hi: 0x00ff, Stride: 1},
		{Lo: 0x2028, Hi: 0x2029, Stride: 1},
		{Lo: 0x4e00, Hi: 0x4e08, Stride: 1},
		{Lo: 0xfeff, Hi: 0xfeff, Stride: 1},
		{Lo: 0xfffe, Hi: 0xffff, Stride: 1},
	},
	R32: []unicode.Range32{
		{Lo: 0x1d518, Hi: 0x1d518, Stride: 1},
		{Lo: 0x1f600, Hi: 0x1f604, Stride: 1},
		{Lo: 0x10ffff, Hi: 0x10ffff, Stride: 1},
	},
}

// awkwardKeys need quoting for one reason or another, or sit right at the
// edge of the bare-key pattern.
var awkwardKeys = []string{
	"plain", "a.b-c_d", "_u", "UPPER", "x9", "a:b", "", " lead", "trail ", "key\n", "cr\rkey", "tab\tkey",
	"true", "True", "TRUE", "false", "null", "Null", "NULL", "y", "Y", "n", "N", "yes", "No", "on", "OFF", "tRUE", "nan", "inf",
	"~", "#hash", "-dash", "9lives", "123", "1e5", "é", "😀", "\u2028", "\u0085", "\x7f", "\ufeff", "a #b", "a: b", "<<", "=",
	"source", "status", "sensitive", "title", "url", "body", "quote", "fix_ref", "verified_revision_id", "verified_at",
	"writer", "timestamp", "ttl_minutes", "outcome", "counts", "lease", "items", "sources", "last_run", "schema_version",
}

var awkwardFloats = []float64{
	0, math.Copysign(0, -1), 1, -1.5, 0.1, 1e16, 1e15, 1e-5, 1e-4, 5e-324, 1.7976931348623157e308,
	-1.7976931348623157e308, 123456789, 1e22, 0.30000000000000004, 2.5e-8, 9007199254740993, 1e100,
}

func genString(t *rapid.T, label string) string {
	return rapid.StringOf(rapid.RuneFrom(nil, awkwardRunes)).Draw(t, label)
}

func genKey(t *rapid.T) string {
	if rapid.Bool().Draw(t, "keyFromPool") {
		return rapid.SampledFrom(awkwardKeys).Draw(t, "poolKey")
	}
	return genString(t, "key")
}

func genBigInt(t *rapid.T) *big.Int {
	n, _ := new(big.Int).SetString(rapid.StringMatching(`-?(0|[1-9][0-9]{0,45})`).Draw(t, "int"), 10)
	return n
}

func genFloat(t *rapid.T) float64 {
	if rapid.Bool().Draw(t, "awkwardFloat") {
		return rapid.SampledFrom(awkwardFloats).Draw(t, "float")
	}
	f := math.Float64frombits(rapid.Uint64().Draw(t, "floatBits"))
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0.5
	}
	return f
}

// scalars draws the leaves of generated documents: keys and floats. The
// plain drawing (plainScalars) and the reference writer's awkward forms
// (reference_writer_test.go) differ only there.
type scalars struct {
	key   func(*rapid.T) string
	float func(*rapid.T) float64
}

var plainScalars = scalars{key: genKey, float: genFloat}

// value draws any value; containers only while depth > 0.
func (g scalars) value(t *rapid.T, depth int) value.Value {
	kinds := 6
	if depth > 0 {
		kinds = 9
	}
	switch rapid.IntRange(0, kinds-1).Draw(t, "kind") {
	case 0:
		return nil
	case 1:
		return rapid.Bool().Draw(t, "bool")
	case 2:
		return genBigInt(t)
	case 3:
		return g.float(t)
	case 4, 5:
		return genString(t, "string")
	case 6:
		out := make([]value.Value, rapid.IntRange(0, 3).Draw(t, "listLen"))
		for i := range out {
			out[i] = g.value(t, depth-1)
		}
		return out
	default:
		return g.mapOf(t, depth-1, 4)
	}
}

func (g scalars) mapOf(t *rapid.T, depth, maxLen int) *value.Map {
	m := value.NewMap()
	for range rapid.IntRange(0, maxLen).Draw(t, "mapLen") {
		m.Set(g.key(t), g.value(t, depth))
	}
	return m
}

func genValue(t *rapid.T, depth int) value.Value { return plainScalars.value(t, depth) }

func genMap(t *rapid.T, depth, maxLen int) *value.Map { return plainScalars.mapOf(t, depth, maxLen) }

// genDocument draws a state-shaped document: the known top-level keys in
// random order (each may be missing), items and sources keyed by awkward ids,
// and unknown top-level keys holding anything.
func genDocument(t *rapid.T) *value.Map {
	doc := value.NewMap()
	parts := rapid.Permutation([]string{"schema_version", "lease", "sources", "items", "last_run", "extra"}).Draw(t, "order")
	for _, p := range parts {
		// schema_version is always there: an empty document is the engine's
		// NO-STATE case and is never written.
		if p != "schema_version" && rapid.IntRange(0, 4).Draw(t, "presence") == 0 {
			continue
		}
		switch p {
		case "schema_version":
			doc.Set(p, genBigInt(t))
		case "lease", "last_run":
			doc.Set(p, genMap(t, 2, 5))
		case "sources", "items":
			ids := value.NewMap()
			for range rapid.IntRange(0, 4).Draw(t, "ids") {
				ids.Set(genKey(t)+":"+genKey(t), genMap(t, 2, 6))
			}
			doc.Set(p, ids)
		default:
			for range rapid.IntRange(0, 3).Draw(t, "extras") {
				doc.Set(genKey(t), genValue(t, 3))
			}
		}
	}
	return doc
}
