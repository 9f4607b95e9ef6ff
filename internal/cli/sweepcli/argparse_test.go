package sweepcli

import (
	"encoding/json"
	"maps"
	"os"
	"strconv"
	"testing"
)

// pythonArgvCase is one argv run through an argparse parser of the reference
// engine's shape by Python 3.11.7 (../argparse/testdata/sweep_python_gen.py writes
// sweep_python.json beside it: python3 sweep_python_gen.py 7 3000).
type pythonArgvCase struct {
	Args   []string          `json:"args"`
	RC     int               `json:"rc"`
	Help   bool              `json:"help"`
	Cmd    string            `json:"cmd"`
	Values map[string]string `json:"values"`
}

func TestArgvMatchesPythonArgparse(t *testing.T) {
	raw, err := os.ReadFile("../argparse/testdata/sweep_python.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []pythonArgvCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	// The file holds 3000 generated cases; far fewer means it was lost or
	// truncated, and the test would check next to nothing.
	var parsed, help, refused int
	for _, c := range cases {
		switch {
		case c.RC != 0:
			refused++
		case c.Help:
			help++
		default:
			parsed++
		}
	}
	if len(cases) < 3000 || parsed < 100 || help < 100 || refused < 100 {
		t.Fatalf("too few argparse cases: %d (%d parsed, %d help, %d refused)", len(cases), parsed, help, refused)
	}
	for i, c := range cases {
		cl, err := parseCommandLine(c.Args)
		rc := 0
		if err != nil {
			rc = 2
		}
		desc := "case " + strconv.Itoa(i) + " " + strconv.Quote(string(mustJSON(c.Args)))
		if rc != c.RC {
			t.Errorf("%s: exit %d, Python %d (err %v)", desc, rc, c.RC, err)
			continue
		}
		if rc != 0 {
			continue
		}
		if cl.help != c.Help {
			t.Errorf("%s: help %v, Python %v", desc, cl.help, c.Help)
			continue
		}
		if c.Help {
			continue
		}
		if cl.sub.name != c.Cmd || !maps.Equal(cl.values, c.Values) {
			t.Errorf("%s: %s %v, Python %s %v", desc, cl.sub.name, cl.values, c.Cmd, c.Values)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
