package sweepengine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/stateguard/stateguard/model/sweep"
)

// FuzzLegacyImport imports any bytes as the legacy file, with any
// --source-map text (or none), into a valid state file. Oracles: the
// answer (counts imported) and the resulting document equal the model's
// on the decoded legacy file; the state file stays readable by
// sigs.k8s.io/yaml as a mapping (apart from U+FEFF, a limit spec/ names).
func FuzzLegacyImport(f *testing.F) {
	for _, s := range []struct{ legacy, sm string }{
		{`{"channels": {"C42": {"last_processed_ts": "1700000000.000100"}, "gh": {"cursor": 8}}}`, `{"C42": "slack:C42"}`},
		{`{"items": {"C42:9": {"status": "ingested", "channel": "C42", "title": "t", "extra": 1}, "bare": {}}}`, ``},
		{`{"items": [{"id": "a1", "source": "src-1", "url": "u"}, {"id": 5}, {"id": ""}, {"id": null}, 7]}`, `["C42"]`},
		{"channels:\n  C9:\n    cursor: \"10\"\nitems:\n  \"C9:1\":\n    status: \"closed\"\n", `{"C9": null, "C7": 5}`},
		{`{"channels": {"gh": {"cursor": "1"}}}`, `not json`},
		{"", ""}, {"[1, 2]", "{}"}, {"\xff", "{}"}, {`{"items": {"x": {"title": "\ufeff"}}}`, ""},
		{`{"channels": {"gh": {"cursor": 1.5}, "sec": {"cursor": "4"}}, "items": {"gh:9": {"status": "closed"}}}`, `{"gh": "sec"}`},
	} {
		f.Add([]byte(s.legacy), s.sm, s.sm != "")
	}
	f.Fuzz(func(t *testing.T, legacy []byte, sourceMap string, withMap bool) {
		if withMap && !utf8.ValidString(sourceMap) {
			return // misuse (D9), covered by FuzzArgv
		}
		dir := t.TempDir()
		state := filepath.Join(dir, "state.yml")
		file := filepath.Join(dir, "legacy.json")
		mustWrite(t, state, []byte(heldState))
		mustWrite(t, file, legacy)
		a := argv("import-legacy", state, flag("file", file))
		cmd := sweep.ImportLegacy{Legacy: decodeLegacy(legacy)}
		if withMap {
			a = append(a, flag("source-map", sourceMap)...)
			cmd.SourceMap = decodeJSON(sourceMap)
		}
		rc, stdout, stderr := runCLI(a)
		res, next := sweep.Apply(stateOf([]byte(heldState), true), cmd)
		if rc != 0 || stdout != answer(res) {
			t.Fatalf("legacy %q map %q: exit %d stdout %q stderr %q; model %q", legacy, sourceMap, rc, stdout, stderr, answer(res))
		}
		if err := checkFile(state, next, []byte(heldState)); err != nil {
			t.Fatalf("legacy %q map %q: %v", legacy, sourceMap, err)
		}
		after, err := os.ReadFile(state)
		if err != nil {
			t.Fatal(err)
		}
		// Two known limits of the "any YAML parser" promise (spec 15.1.3):
		// a raw U+FEFF, and a key longer than YAML's 1024-character limit
		// on implicit keys (the engine writes keys as the reference does).
		if bytes.Contains(after, []byte("\ufeff")) || hasLongKey(after) {
			return
		}
		var doc map[string]any
		if err := yaml.Unmarshal(after, &doc); err != nil || doc == nil {
			t.Fatalf("legacy %q map %q: sigs.k8s.io/yaml cannot read the state file (%v):\n%s", legacy, sourceMap, err, after)
		}
	})
}

// hasLongKey reports whether a line of a state file holds a mapping key
// (quoted or bare) longer than the 1024 characters YAML allows for an
// implicit key; sigs.k8s.io/yaml then cannot find the key's colon.
func hasLongKey(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimLeft(line, " ")
		end := strings.IndexByte(line, ':')
		if strings.HasPrefix(line, `"`) {
			end = -1
			for i := 1; i < len(line); i++ {
				if line[i] == '\\' {
					i++
					continue
				}
				if line[i] == '"' {
					end = i + 1
					break
				}
			}
			if end < 0 || end >= len(line) || line[end] != ':' {
				continue
			}
		}
		if end > 0 && utf8.RuneCountInString(line[:end]) > 1024 {
			return true
		}
	}
	return false
}
