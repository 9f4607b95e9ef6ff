package argparse

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// A parser of both command lines' shapes: a flag, an option taking a
// value, a checked number, choices, kept values, a positional.
var testParser = Parser{
	Options: []Option{
		HelpOption,
		{Names: []string{"--version"}, Key: "version", Kind: Version},
		{Names: []string{"--dry-run"}, Key: "dry-run", Kind: Flag},
		{Names: []string{"--db"}, Key: "db", Required: true},
		{Names: []string{"--seconds"}, Key: "seconds", Type: func(s string) error {
			if strings.Trim(strings.TrimSpace(s), "-0123456789") != "" {
				return errors.New("not a number")
			}
			return nil
		}},
		{Names: []string{"--state"}, Key: "state", Kind: Append, Choices: []string{"a", "b"}},
		{Names: []string{"--status"}, Key: "status"},
	},
	Positionals: []string{"id"},
}

func TestParse(t *testing.T) {
	type want struct {
		values  string // "key=value ..." in key order
		extras  string // space-separated
		missing string
		help    bool
		version bool
	}
	cases := []struct {
		argv []string
		want want
	}{
		{[]string{"--db", "x", "7"}, want{values: "db=x id=7"}},
		{[]string{"--db", "x", "--dr", "7"}, want{values: "db=x id=7"}},
		{[]string{"--db=x=y", "7"}, want{values: "db=x=y id=7"}},
		{[]string{"--db", "-5", "-.5"}, want{values: "db=-5 id=-.5"}},
		// Python's "$" matches before a final newline, so "-0\n" is a
		// value; two newlines are not.
		{[]string{"--seconds", "-0\n", "--db", "x", "7"}, want{values: "db=x id=7 seconds=-0\n"}},
		{[]string{"--db", "x y", "-a b"}, want{values: "db=x y id=-a b"}},
		{[]string{"--state", "a", "--state=b", "--db", "x", "7"}, want{values: "db=x id=7 state=b"}},
		{[]string{"7"}, want{values: "id=7", missing: "--db"}},
		{[]string{"--db", "x"}, want{values: "db=x", missing: "id"}},
		{[]string{"--db", "x", "7", "8", "--bogus"}, want{values: "db=x id=7", extras: "8 --bogus"}},
		{[]string{"--bogus", "--db", "x", "7"}, want{values: "db=x id=7", extras: "--bogus"}},
		// A "--" around the words a positional takes is dropped; any
		// other is left over, and every word after the first is a value.
		{[]string{"--db", "x", "--", "7"}, want{values: "db=x id=7"}},
		{[]string{"--db", "x", "7", "--"}, want{values: "db=x id=7"}},
		{[]string{"7", "--db", "x", "--"}, want{values: "db=x id=7", extras: "--"}},
		{[]string{"--db", "x", "--", "--", "--db"}, want{values: "db=x id=--", extras: "--db"}},
		{[]string{"--db", "x", "-hh"}, want{help: true}},
		{[]string{"--bogus", "--version", "--db"}, want{version: true}},
		{[]string{"--db", "x", "--help", "--db"}, want{help: true}},
	}
	for _, c := range cases {
		res, err := testParser.Parse(c.argv)
		if err != nil {
			t.Errorf("%q: %v", c.argv, err)
			continue
		}
		var values []string
		for k, v := range res.Values {
			values = append(values, k+"="+v)
		}
		slices.Sort(values)
		got := want{strings.Join(values, " "), strings.Join(res.Extras, " "), strings.Join(res.Missing, " "), res.Help, res.Version}
		if res.Help || res.Version {
			got.values, got.extras, got.missing = c.want.values, c.want.extras, c.want.missing
		}
		if got != c.want {
			t.Errorf("%q: got %+v, want %+v", c.argv, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		argv []string
		kind ErrorKind
		text string
	}{
		{[]string{"--d"}, Ambiguous, "ambiguous option: --d could match --dry-run, --db"},
		{[]string{"--st=a"}, Ambiguous, "ambiguous option: --st could match --state, --status"},
		{[]string{"--db", "x", "7", "--st"}, Ambiguous, "ambiguous option: --st could match --state, --status"},
		{[]string{"-hx"}, ExplicitArgument, "argument -h/--help: ignored explicit argument"},
		{[]string{"-h="}, ExplicitArgument, "argument -h/--help: ignored explicit argument"},
		{[]string{"--dry-run="}, ExplicitArgument, "argument --dry-run: ignored explicit argument"},
		{[]string{"--db"}, ExpectedOne, "argument --db: expected one argument"},
		{[]string{"--db", "--"}, ExpectedOne, "argument --db: expected one argument"},
		{[]string{"--db", "-x"}, ExpectedOne, "argument --db: expected one argument"},
		{[]string{"--db", "x", "--seconds", "-0\n\n"}, ExpectedOne, "argument --seconds: expected one argument"},
		{[]string{"--seconds", "x", "--help"}, InvalidValue, "argument --seconds: not a number"},
		{[]string{"--state", "c", "--help"}, InvalidChoice, "argument --state: invalid choice"},
	}
	for _, c := range cases {
		_, err := testParser.Parse(c.argv)
		var perr *Error
		if !errors.As(err, &perr) || perr.Kind != c.kind || err.Error() != c.text {
			t.Errorf("%q: error %v, want %q", c.argv, err, c.text)
		}
	}
}

func TestSubcommandTakesTheRest(t *testing.T) {
	p := Parser{Options: []Option{HelpOption, {Names: []string{"--db"}, Key: "db"}}, Subcommand: true}
	for _, c := range []struct {
		argv    []string
		command string
		rest    string
	}{
		{[]string{"--db", "x", "run", "--help", "--db", "y"}, "run", "--help --db y"},
		{[]string{"run", "--", "x"}, "run", "-- x"},
		{[]string{"--db", "x", "--", "run"}, "--", "run"},
		{[]string{"--db", "x"}, "", ""},
	} {
		res, err := p.Parse(c.argv)
		if err != nil || res.Command != c.command || strings.Join(res.Rest, " ") != c.rest || res.Help {
			t.Errorf("%q: %+v, %v; want command %q rest %q", c.argv, res, err, c.command, c.rest)
		}
		if c.command == "" && !slices.Equal(res.Missing, []string{"command"}) {
			t.Errorf("%q: missing %q, want the command", c.argv, res.Missing)
		}
	}
}

func TestLooksNegative(t *testing.T) {
	for s, want := range map[string]bool{
		"-5": true, "-.5": true, "-1.25": true, "-\u0663": true, "-5\n": true, "-.5\n": true,
		"-": false, "-5.": false, "-.": false, "-5\n\n": false, "-\n": false, "5": false, "-5e3": false, "-1.2.3": false,
	} {
		if LooksNegative(s) != want {
			t.Errorf("LooksNegative(%q) = %v", s, !want)
		}
	}
}
