package ledgercli

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strconv"
	"testing"
)

// pythonArgvCase is one argv run through an argparse parser of the
// reference ledger's shape by Python 3.11.7
// (../argparse/testdata/ledger_python_gen.py writes ledger_python.json
// beside it: python3 ledger_python_gen.py 11 4000).
type pythonArgvCase struct {
	Args    []string            `json:"args"`
	RC      int                 `json:"rc"`
	Help    bool                `json:"help"`
	Version bool                `json:"version"`
	Cmd     string              `json:"cmd"`
	Values  map[string]string   `json:"values"`
	Lists   map[string][]string `json:"lists"`
	Flags   []string            `json:"flags"`
}

// TestArgvMatchesPythonArgparse: the command line reads every recorded
// argv as Python's argparse did: refused, help, version, or the same
// command with the same values.
func TestArgvMatchesPythonArgparse(t *testing.T) {
	raw, err := os.ReadFile("../argparse/testdata/ledger_python.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []pythonArgvCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	// Far fewer cases of a kind would mean the file was lost or cut, and
	// the test would check next to nothing.
	var parsed, help, version, refused int
	for _, c := range cases {
		switch {
		case c.RC != 0:
			refused++
		case c.Help:
			help++
		case c.Version:
			version++
		default:
			parsed++
		}
	}
	if len(cases) < 4000 || parsed < 300 || help < 50 || version < 20 || refused < 1000 {
		t.Fatalf("too few argparse cases: %d (%d parsed, %d help, %d version, %d refused)", len(cases), parsed, help, version, refused)
	}
	for i, c := range cases {
		desc := "case " + strconv.Itoa(i) + " " + strconv.Quote(string(mustJSON(c.Args)))
		top, sub, text, err := readArgv(c.Args)
		rc := 0
		if err != nil {
			rc = 2
		}
		if rc != c.RC {
			t.Errorf("%s: exit %d, Python %d (err %v)", desc, rc, c.RC, err)
			continue
		}
		if rc != 0 {
			continue
		}
		gotVersion := text == versionText()
		gotHelp := text != "" && !gotVersion
		if gotHelp != c.Help || gotVersion != c.Version {
			t.Errorf("%s: help %v version %v, Python %v %v", desc, gotHelp, gotVersion, c.Help, c.Version)
			continue
		}
		if text != "" {
			continue
		}
		values := maps.Clone(sub.Values)
		maps.Copy(values, top.Values)
		lists := sub.Lists
		for k := range sub.Values {
			if _, ok := lists[k]; ok {
				delete(values, k)
			}
		}
		var flags []string
		for k := range maps.Keys(top.Flags) {
			flags = append(flags, k)
		}
		for k := range maps.Keys(sub.Flags) {
			flags = append(flags, k)
		}
		slices.Sort(flags)
		if top.Command != c.Cmd || !maps.Equal(values, c.Values) || !maps.EqualFunc(lists, c.Lists, slices.Equal) ||
			!slices.Equal(flags, c.Flags) && len(flags)+len(c.Flags) > 0 {
			t.Errorf("%s: %s %v %v %v, Python %s %v %v %v", desc, top.Command, values, lists, flags, c.Cmd, c.Values, c.Lists, c.Flags)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
