package yamlsubset_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/refcheck"
	"github.com/stateguard/stateguard/model/value"
	"pgregory.net/rapid"
)

// yaml11Words are every YAML 1.1 boolean and null spelling, plus words a
// YAML reader may take for a number: the reference writer puts all of them
// bare when they are keys.
var yaml11Words = []string{
	"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
	"on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "nan", "NaN", "inf", "Infinity", "tRUE",
}

var nonFinite = []float64{math.NaN(), math.Inf(1), math.Inf(-1)}

// genRefKey draws keys of every class the reference writer distinguishes:
// YAML 1.1 words, any match of its bare-key pattern, and keys it quotes.
func genRefKey(t *rapid.T) string {
	switch rapid.IntRange(0, 3).Draw(t, "keyClass") {
	case 0:
		return rapid.SampledFrom(yaml11Words).Draw(t, "wordKey")
	case 1:
		return rapid.StringMatching(`[A-Za-z_][A-Za-z0-9_.-]{0,6}`).Draw(t, "bareKey")
	case 2:
		k := rapid.SampledFrom(awkwardKeys).Draw(t, "poolKey")
		if strings.HasSuffix(k, "\n") {
			return strings.TrimSuffix(k, "\n") // D4: the reference corrupts its own file there
		}
		return k
	}
	k := genString(t, "key")
	if strings.HasSuffix(k, "\n") {
		k += "x" // D4 again
	}
	return k
}

func genRefFloat(t *rapid.T) float64 {
	if rapid.IntRange(0, 2).Draw(t, "nonFinite?") == 0 {
		return rapid.SampledFrom(nonFinite).Draw(t, "nonFinite")
	}
	return genFloat(t)
}

// refScalars draws the reference writer's awkward keys and floats.
var refScalars = scalars{key: genRefKey, float: genRefFloat}

// genRefDocument draws a state-shaped document whose every level holds
// the reference writer's awkward forms.
func genRefDocument(t *rapid.T) *value.Map {
	doc := value.NewMap()
	doc.Set("schema_version", genBigInt(t))
	for _, p := range []string{"lease", "sources", "items", "last_run"} {
		if rapid.IntRange(0, 3).Draw(t, "presence") == 0 {
			continue
		}
		switch p {
		case "lease", "last_run":
			doc.Set(p, refScalars.mapOf(t, 2, 5))
		default:
			ids := value.NewMap()
			for range rapid.IntRange(0, 3).Draw(t, "ids") {
				ids.Set(genRefKey(t), refScalars.mapOf(t, 2, 5))
			}
			doc.Set(p, ids)
		}
	}
	for range rapid.IntRange(0, 2).Draw(t, "extras") {
		doc.Set(genRefKey(t), refScalars.value(t, 3))
	}
	return doc
}

// TestReferenceWriterRead is the drop-in law for files the reference wrote:
// the bytes the reference writer produces for any document read back in
// this codec to the document the reference reader gives, and a write of
// this codec on top reads back, in this codec and in the reference's
// reading, to that same document.
func TestReferenceWriterRead(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		if err := refcheck.Check(genRefDocument(t)); err != nil {
			t.Fatal(err)
		}
	})
}
