package sweeprules

import "github.com/stateguard/stateguard/internal/codec/yamlsubset"

// The keys the engine's load rules name (spec/sweep-state.md §2.3, §2.5).
const (
	// VersionKey: a document without it is CORRUPT.
	VersionKey = "schema_version"
	// SourcesKey and ItemsKey are added as empty maps when absent; an
	// items that is not a map fails every call, a sources that is not
	// one only the calls that use it.
	SourcesKey = "sources"
	ItemsKey   = "items"
	// LegacyEvidenceKey is renamed to verified_revision_id in each item
	// that lacks the latter, or dropped.
	LegacyEvidenceKey = "verified_merge_sha"
)

var (
	loadRequired  = []string{VersionKey, SourcesKey, ItemsKey}
	loadMaps      = []string{SourcesKey, ItemsKey}
	loadRewritten = []string{LegacyEvidenceKey}
)

// StateLoad is the load's rules as data for the codec's fast readers of
// the engine's own form, which take only a file the load leaves as it is
// and leave every other one to the general parser and the load: the
// three top-level keys present, sources and items maps, and the legacy
// evidence key nowhere. The slices are shared: callers must not change
// them.
func StateLoad() yamlsubset.LoadRules {
	return yamlsubset.LoadRules{Required: loadRequired, Maps: loadMaps, Rewritten: loadRewritten}
}
