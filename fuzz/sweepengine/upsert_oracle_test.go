package sweepengine

import "testing"

// TestJudgeAcceptanceRefusals: texts the contract refuses (not JSON, or
// not an object) must fail FuzzUpsertJSON's oracle when the engine merges
// them. The model decodes --json with the engine's own pyjson, so the
// model comparison cannot see a decoder that accepts too much, and the
// independent check ran in one direction only.
func TestJudgeAcceptanceRefusals(t *testing.T) {
	for _, text := range []string{`{"a": 1,}`, `{"a": 1} x`, `{'a': 1}`, `[1]`, `{"a": 01}`} {
		if judgeAcceptance(text, "OK\n") == nil {
			t.Errorf("--json %q merged: passed the oracle", text)
		}
	}
	for _, text := range []string{`{}`, ` {"a": [1, 2.5, null]} `} {
		if err := judgeAcceptance(text, "OK\n"); err != nil {
			t.Errorf("--json %q merged: %v", text, err)
		}
	}
}
