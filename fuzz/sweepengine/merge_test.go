package sweepengine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/fuzz/internal/memdir"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// mergeSeedBase, mergeSeedOurs and mergeSeedTheirs are two sweeps from one
// base that touch every rule of spec 21 (lease, cursor, a merged item,
// redaction, evidence, last_run).
const (
	mergeSeedBase = `schema_version: 1
lease:
  writer: "w1"
  timestamp: "2026-07-02T12:00:00Z"
  ttl_minutes: 60
sources:
  gh:
    cursor: "10"
items:
  "gh:1":
    source: "gh"
    status: "analyzed"
    id: "1"
`
	mergeSeedOurs = `schema_version: 1
lease:
  writer: "w2"
  timestamp: "2026-07-02T13:30:00Z"
  ttl_minutes: 60
sources:
  gh:
    cursor: "12"
items:
  "gh:1":
    source: "gh"
    status: "in_plan"
    body: "secret"
    id: "1"
  "gh:2":
    source: "gh"
    id: "2"
last_run:
  timestamp: "2026-07-02T13:00:00Z"
  outcome: "partial"
  writer: "w2"
  counts: {}
`
	mergeSeedTheirs = `schema_version: 2
lease:
  writer: "w1"
  timestamp: "2026-07-02T12:45:00Z"
  ttl_minutes: 60
sources:
  gh:
    sensitive: true
    cursor: "11"
items:
  "gh:1":
    source: "gh"
    status: "closed"
    fix_ref: "PR 7"
    id: "1"
last_run:
  timestamp: "not a time"
  outcome: "completed"
  writer: "w1"
  counts: {}
zz_custom: "kept"
`
	mergeSeedMarkers = "schema_version: 1\n<<<<<<< ours\nsources: {}\n=======\nsources:\n  gh:\n    cursor: \"3\"\n>>>>>>> theirs\nitems: {}\n"
)

// FuzzMergeTexts runs `sweep-state merge` on any three texts (an empty
// base text stands for a missing base file, as git's %O of a file added on
// both sides). Either the merge answers OK and ours holds a file the engine
// reads back (canonical: its own writing of what it reads) whose document
// and counts are model/sweep's reading of spec 21, or it answers the word
// the model gives (CORRUPT, ERROR) and ours keeps its bytes; no other file
// appears beside the inputs but ours' lock.
func FuzzMergeTexts(f *testing.F) {
	big := string(benchseed.SweepState(3))
	// Sides of big in the engine's own form, which the merge reads split
	// into its items entries: a new lease, a further cursor, a source
	// made sensitive, an item closed without evidence, an item marked
	// sensitive that keeps its body, a comment line.
	newLease := strings.Replace(big, `writer: "w1"`, `writer: "w2"`, 1)
	furtherCursor := strings.Replace(big, `cursor: "1719900000.000100"`, `cursor: "1719900000.000200"`, 1)
	sensitiveSource := strings.Replace(big, "\n    cursor:", "\n    sensitive: true\n    cursor:", 1)
	closedNoEvidence := strings.Replace(newLease, `status: "analyzed"`, `status: "closed"`, 1)
	sensitiveItem := strings.Replace(big, `status: "analyzed"`+"\n", `status: "analyzed"`+"\n    sensitive: true\n", 1)
	for _, seed := range [][3]string{
		{big, newLease, sensitiveSource},
		{big, closedNoEvidence, furtherCursor},
		{sensitiveItem, strings.Replace(sensitiveItem, `writer: "w1"`, `writer: "w2"`, 1),
			strings.Replace(sensitiveItem, `cursor: "1719900000.000100"`, `cursor: "1719900000.000200"`, 1)},
		{big, "# a note\n" + newLease, strings.Replace(big, "Item 2:", "Item two:", 1)},
		{mergeSeedBase, mergeSeedOurs, mergeSeedTheirs},
		{mergeSeedBase, mergeSeedTheirs, mergeSeedOurs},
		{"", mergeSeedOurs, mergeSeedTheirs},
		{mergeSeedBase, mergeSeedOurs, mergeSeedMarkers},
		{mergeSeedMarkers, mergeSeedOurs, mergeSeedTheirs},
		{mergeSeedBase, "  \n", mergeSeedTheirs},
		{mergeSeedBase, mergeSeedOurs, "schema_version: 1\nitems: 7\n"},
		{big, big, strings.Replace(big, `status: "closed"`, `status: "needs_analysis"`, 1)},
		{mergeSeedBase, mergeSeedOurs, mergeSeedOurs},
	} {
		f.Add(seed[0], seed[1], seed[2], false)
		f.Add(seed[0], seed[1], seed[2], true)
	}
	f.Fuzz(func(t *testing.T, base, ours, theirs string, oursPublished bool) {
		dir := memdir.TempDir(t) // fsync is free there: the oracle is not about durability
		paths := map[string]string{}
		for name, text := range map[string]string{"base.yml": base, "ours.yml": ours, "theirs.yml": theirs} {
			paths[name] = filepath.Join(dir, name)
			if name == "base.yml" && text == "" {
				continue
			}
			mustWrite(t, paths[name], []byte(text))
		}
		published := "theirs"
		if oursPublished {
			published = "ours"
		}
		rc, stdout, stderr := runCLI([]string{"merge", "--base", paths["base.yml"], "--ours", paths["ours.yml"],
			"--theirs", paths["theirs.yml"], "--published", published})
		word, doc, counts := sweep.Merge(stateOf([]byte(base), base != ""), stateOf([]byte(ours), true),
			stateOf([]byte(theirs), true), oursPublished)
		if err := checkMerge(dir, rc, stdout, stderr, ours, word, doc, counts); err != nil {
			t.Fatalf("%v\nbase %q\nours %q\ntheirs %q\npublished %s", err, base, ours, theirs, published)
		}
	})
}

func checkMerge(dir string, rc int, stdout, stderr, ours, word string, doc *value.Map, counts sweep.MergeCounts) error {
	if rc != 0 {
		return fmt.Errorf("exit %d (stderr %q)", rc, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, n := range names {
		if !slices.Contains([]string{"base.yml", "ours.yml", "theirs.yml", "ours.yml.lock"}, n) {
			return fmt.Errorf("a stray file %q beside the inputs", n)
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "ours.yml"))
	if err != nil {
		return err
	}
	if word != sweep.OK {
		if stdout != word+"\n" {
			return fmt.Errorf("stdout %q, model %s", stdout, word)
		}
		if !bytes.Equal(got, []byte(ours)) {
			return fmt.Errorf("%s changed ours: %q", word, got)
		}
		return nil
	}
	want := fmt.Sprintf("OK\n{\"items_merged\": %d, \"fields_settled_by_published\": %d, \"cursors_advanced\": %d, \"evidence_downgrades\": %d}\n",
		counts.ItemsMerged, counts.SettledByPublished, counts.CursorsAdvanced, counts.EvidenceDowngrades)
	if stdout != want || stderr != "" {
		return fmt.Errorf("stdout %q stderr %q, model %q", stdout, stderr, want)
	}
	read, err := yamlsubset.Parse(got)
	if err != nil {
		return fmt.Errorf("the merged file does not read back (%v):\n%s", err, got)
	}
	if !bytes.Equal(yamlsubset.Emit(read), got) {
		return fmt.Errorf("the merged file is not in canonical form:\n%s", got)
	}
	if !value.EqualOrdered(read, doc) {
		return fmt.Errorf("merged\n%s\nmodel\n%s", pyjson.Encode(read), pyjson.Encode(doc))
	}
	rc, out, _ := runCLI([]string{"read", "--state", filepath.Join(dir, "ours.yml")})
	if rc != 0 || !strings.HasPrefix(out, "OK\n") {
		return fmt.Errorf("read of the merged file answered %q", out)
	}
	return nil
}
