package ledgercli

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestPyFloat pins float text against values printed by Python 3.11's
// repr (recorded once; Python is not needed to run the test).
func TestPyFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{900, "900.0"},
		{1e308, "1e+308"},
		{1e16, "1e+16"},
		{1e-5, "1e-05"},
		{0.0001, "0.0001"},
		{123456789, "123456789.0"},
		{978308501.1, "978308501.1"},
		{10978308501, "10978308501.0"},
		{0.5, "0.5"},
		{math.Copysign(0, -1), "-0.0"},
		{0, "0.0"},
		{1.5e-7, "1.5e-07"},
		{9999999999999998, "9999999999999998.0"},
		{1e15, "1000000000000000.0"},
		{123.456, "123.456"},
		{5e-324, "5e-324"},
		{math.MaxFloat64, "1.7976931348623157e+308"},
		{0.30000000000000004, "0.30000000000000004"},
		{-12.5, "-12.5"},
		{1e22, "1e+22"},
		{1e10, "10000000000.0"},
	}
	for _, c := range cases {
		if got := pyFloat(c.in); got != c.want {
			t.Errorf("pyFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEncodeLineSortsKeysCompactly(t *testing.T) {
	v := object{"ok": true, "b": []object{{"z": nil, "a": int64(3)}}, "a": 1.0, "s": "é\"\n\U0001F600"}
	got := string(encodeLine(v))
	want := `{"a":1.0,"b":[{"a":3,"z":null}],"ok":true,"s":"\u00e9\"\n\ud83d\ude00"}` + "\n"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestParseSeconds(t *testing.T) {
	accept := map[string]float64{
		"900": 900, " 5 ": 5, "\t7\n": 7, "-0": 0, "-0.0": 0, "+3": 3, "1e-400": 0, "-1e-400": 0,
		"1e308": 1e308, "1.5": 1.5, ".5": 0.5, "5.": 5, "1E3": 1000, "0": 0,
	}
	for text, want := range accept {
		got, ok := parseSeconds(text)
		if !ok || got != want || math.Signbit(got) {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v", text, got, ok, want)
		}
	}
	refuse := []string{
		"", " ", "abc", "-1", "-0.5", "0x10", "nan", "NaN", "inf", "Infinity", "-inf", "1e309",
		"1_000", "１", "1 2", "1e", "e5", ".", "+", "--1", "1.2.3", "\u00a05",
	}
	for _, text := range refuse {
		if got, ok := parseSeconds(text); ok {
			t.Errorf("parseSeconds(%q) = %v, accepted; want refusal", text, got)
		}
	}
}

const testID = "7a5c0001-0000-4000-8000-000000000001"

// TestParseCommandLineOutcomes pins which command lines give help, the
// version, a usage error, or a validated invocation, in argparse's order.
func TestParseCommandLineOutcomes(t *testing.T) {
	type outcome int
	const (
		usage outcome = iota
		ok
		help
		version
	)
	// On Windows a path whose final name ends in ":" names a drive's
	// current directory and "//host/share" is a UNC path; elsewhere both
	// are ordinary paths (spec/task-state-guard.md 11.1).
	trailingColon, uncSlashes := ok, ok
	if platformtest.Windows {
		trailingColon, uncSlashes = usage, usage
	}
	cases := []struct {
		argv string
		want outcome
		text string // expected help text for help cases ("" = don't check)
	}{
		{"--help", help, topHelp},
		{"-h", help, topHelp},
		{"--he", help, topHelp},
		{"-hh", help, topHelp},
		{"--db x --help", help, topHelp},
		{"--bogus --help", help, topHelp},
		{"--db x --help frobnicate", help, topHelp},
		{"--version", version, versionText()},
		{"--vers", version, versionText()},
		{"--db x --version init", version, versionText()},
		{"create --help", help, createHelp},
		{"--db x create -h", help, createHelp},
		{"--db x create --bogus --help", help, createHelp},
		{"--db x create --timeout-seconds -1 --help", help, createHelp},
		{"--db x start --help " + testID, help, ""},
		{"--db x start --help", help, ""},
		{"--db x get --help", help, ""},
		{"--db x children -h", help, ""},
		{"--db x close --h", help, closeHelp},
		{"--db x reconcile --help", help, reconcileHelp},
		{"--db x doctor --help", help, ""},
		{"--db x init --help", help, ""},
		{"--db x delivery --help", help, deliveryHelp},

		{"-hx", usage, ""},
		{"--help=1", usage, ""},
		{"--=x --help", usage, ""},
		{"--db x create --p 1", usage, ""},
		{"--db x create --t " + testID, usage, ""},
		{"--db x create --p 1 --help", usage, ""},
		{"--db x create --timeout-seconds abc --help", usage, ""},
		{"--db x frobnicate", usage, ""},
		{"--db x frobnicate --help", usage, ""},
		{"init", usage, ""},
		{"--db x", usage, ""},
		{"", usage, ""},
		{"--db", usage, ""},
		{"--db --allow-external-acl init", usage, ""},
		{"--db x init extra", usage, ""},
		{"--db x init --db y", usage, ""},
		{"--db x start", usage, ""},
		{"--db x start " + testID + " " + testID, usage, ""},
		{"--db x close " + testID, usage, ""},
		{"--db x close " + testID + " --status running", usage, ""},
		{"--db x close " + testID + " --status", usage, ""},
		{"--db x delivery " + testID + " --status succeeded", usage, ""},
		{"--db x start not-a-uuid", usage, ""},
		{"--db x start 0x7a5c000100004000800000000000000", usage, ""},
		{"--db x create --timeout-seconds 1_000", usage, ""},
		{"--db x create --timeout-seconds １", usage, ""},
		{"--db x create --timeout-seconds nan", usage, ""},
		{"--db x create --timeout-seconds inf", usage, ""},
		{"--db x create --timeout-seconds -1", usage, ""},
		{"--db x create --timeout-seconds 1e309", usage, ""},
		{"--db x create --timeout-seconds 0x10", usage, ""},
		{"--db x create --timeout-seconds -1e3", usage, ""},
		{"--db x create --payload-sha256 not-a-hash", usage, ""},
		{"--db x create --payload-sha256 " + strings.Repeat("A", 64), usage, ""},
		{"--db x create --dry-run", usage, ""},
		{"--db x reconcile --d", usage, ""},
		{"--db x reconcile --active-grace-seconds -5", usage, ""},
		{"--db x create --internal=1", usage, ""},
		{"--db= init", usage, ""},
		{"--db :memory: init", usage, ""},
		{"--db x -- init", usage, ""},
		{"--db x --version=1", usage, ""},

		{"--d x init", ok, ""},
		{"--db=x init", ok, ""},
		{"--a --db x init", ok, ""},
		{"--db x create --time 900 --ta " + testID + " --par " + testID + " --pay " + strings.Repeat("a", 64) + " --i", ok, ""},
		{"--db x reconcile --dr --active 0 --de 1e10", ok, ""},
		{"--db x create --timeout-seconds -0", ok, ""},
		{"--db x start -- " + testID, ok, ""},
		{"--db x close " + testID + " --status=succeeded --code=Not_Valid!", ok, ""},
		{"--db x start {7A5C0001-0000-4000-8000-000000000001}", ok, ""},
		{"--db x start urn:uuid:7a5c0001000040008000000000000001", ok, ""},
		{"--db x heartbeat " + testID, ok, ""},
		{"--db x get " + testID, ok, ""},
		{"--db x children " + testID, ok, ""},
		{"--db x doctor", ok, ""},
		{"--db -5 init", ok, ""},
		// The path's text is judged with the other values, by the ledger's
		// own rule (a path naming no file, a UNC path), before any disk
		// access.
		{"--db d/.. init", usage, ""},
		{"--db / start " + testID, usage, ""},
		{`--db \\server\share\x.db doctor`, usage, ""},
		{"--db d/tasks: init", trailingColon, ""},
		{"--db C: init", trailingColon, ""},
		{`--db C:\ init`, trailingColon, ""},
		{"--db //server/share/x.db doctor", uncSlashes, ""},
		{"--db x create --payload-sha256 " + strings.Repeat("ab", 32), ok, ""},
		{"--db x create --payload-sha256 " + strings.Repeat("AB", 32), usage, ""},
	}
	for _, c := range cases {
		args := strings.Fields(c.argv)
		inv, text, err := parseCommandLine(args)
		var got outcome
		switch {
		case err != nil:
			got = usage
			if !errors.Is(err, errUsage) {
				if class, _ := classify(err); class != "InvalidInput" {
					t.Errorf("%q: error class %s, want InvalidInput", c.argv, class)
				}
			}
		case text == versionText():
			got = version
		case text != "":
			got = help
		case inv != nil:
			got = ok
		}
		if got != c.want {
			t.Errorf("%q: outcome %d, want %d", c.argv, got, c.want)
			continue
		}
		if c.text != "" && text != c.text {
			t.Errorf("%q: wrong text:\n%s", c.argv, text)
		}
	}
}

func TestParseCommandLineValues(t *testing.T) {
	inv, _, err := parseCommandLine(strings.Fields("--db a --db b/ --allow-external-acl create --time 9e2 --ta " +
		strings.ToUpper(strings.ReplaceAll(testID, "-", "")) + " --internal"))
	if err != nil {
		t.Fatal(err)
	}
	if inv.db != "b/" || !inv.allowExternalACL || inv.command != "create" || inv.taskID != testID ||
		inv.timeout == nil || *inv.timeout != 900 || !inv.internal || inv.readOnly() {
		t.Fatalf("unexpected invocation %+v", inv)
	}
	inv, _, err = parseCommandLine(strings.Fields("--db x reconcile --dry-run --delivery-grace-seconds 86400"))
	if err != nil {
		t.Fatal(err)
	}
	if !inv.dryRun || inv.activeGrace != 600 || inv.deliveryGrace != 86400 || !inv.readOnly() {
		t.Fatalf("unexpected invocation %+v", inv)
	}
}

func TestClockFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if c, err := clockFromEnv(env(map[string]string{TestNowEnv: "5"})); c != nil || err != nil {
		t.Fatal("TEST_NOW alone must be ignored")
	}
	if c, err := clockFromEnv(env(map[string]string{TestClockEnv: "yes", TestNowEnv: "5"})); c != nil || err != nil {
		t.Fatal("only TEST_CLOCK=1 switches the clock on")
	}
	c, err := clockFromEnv(env(map[string]string{TestClockEnv: "1", TestNowEnv: "978307200.5"}))
	if err != nil || c == nil || c() != 978307200.5 {
		t.Fatal("pinned clock not honoured")
	}
	for _, bad := range []string{"", "abc", "1e999", "nan"} {
		if _, err := clockFromEnv(env(map[string]string{TestClockEnv: "1", TestNowEnv: bad})); err == nil {
			t.Errorf("TEST_NOW=%q accepted", bad)
		}
	}
}

// TestParseCommandLineAsArgparse pins command lines whose words
// strings.Fields cannot spell, against what Python 3.11's argparse does
// with the reference's parser.
func TestParseCommandLineAsArgparse(t *testing.T) {
	cases := []struct {
		argv []string
		ok   bool
	}{
		// argparse's negative-number test ends in "$", which also
		// matches before a final newline: the word is a value, and
		// float() takes it (surrounding whitespace is dropped).
		{[]string{"--db", "x", "reconcile", "--active-grace-seconds", "-0\n"}, true},
		{[]string{"--db", "x", "create", "--timeout-seconds", "-0\n"}, true},
		{[]string{"--db", "x", "list", "--limit", "-5\n"}, false}, // a value, out of range
		{[]string{"--db", "x", "reconcile", "--active-grace-seconds", "-0\n\n"}, false},
		{[]string{"--db", "x", "reconcile", "--active-grace-seconds", "-0 "}, true},
		// A "--" is dropped only where a positional takes the words
		// around it; anywhere else it is left over.
		{[]string{"--db", "x", "init", "--"}, false},
		{[]string{"--db", "x", "reconcile", "--dry-run", "--"}, false},
		{[]string{"--db", "x", "start", testID, "--"}, true},
		{[]string{"--db", "x", "start", "--", testID}, true},
		{[]string{"--db", "x", "close", "--status", "failed", testID, "--"}, true},
		{[]string{"--db", "x", "close", testID, "--status", "failed", "--"}, false},
		{[]string{"--db", "x", "close", testID, "--", "--status", "failed"}, false},
	}
	for _, c := range cases {
		_, _, err := parseCommandLine(c.argv)
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v, want accepted %v", c.argv, err, c.ok)
		}
	}
}
