package sweepcli

import (
	"fmt"
	"strings"
	"unicode"
)

// This file reproduces the command-line rules of Python 3.11's argparse for
// the reference engine's parser shape: a top-level parser with -h/--help and
// one sub-parser per subcommand, each holding only long options that take
// exactly one value, plus -h/--help. No sub-parser has positionals and no
// option looks like a negative number, so argparse's rule "a token that
// looks like a negative number is a value" always applies.
//
// Token classes (argparse's _parse_optional, decided before anything runs):
//   - the first "--" ends options; every later token is a value;
//   - "", "-", tokens not starting with '-', tokens that look like negative
//     numbers (-5, -.5, -1.25, Unicode digits too) and tokens holding a space
//     are values;
//   - "--name", "--name=value", a unique prefix of a long option (with or
//     without "=value"), and "-h" with letters glued on are options;
//   - an ambiguous prefix is misuse at once;
//   - any other token starting with '-' is an unknown option (misuse at the
//     end, unless help runs first).
//
// An option without "=value" takes the next token if it is a value; an
// option token or "--" is never taken as a value (and "--" itself is left
// over, hence misuse), so
// "--json -x" is misuse while "--to -5" and "--to=-x" work. Options run
// in order: -h prints help at once (exit 0), even after an unknown option;
// a conversion error (--ttl-minutes, --outcome) is misuse at once. Then
// missing required options, then leftover tokens, are misuse.

// usageError is misuse with a one-line message for stderr.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func misuse(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// optionSpec is one long option that takes a value.
type optionSpec struct {
	name     string // "--state"
	required bool
	metavar  string
	help     string
	// convert checks the value; an error is misuse.
	convert func(string) error
	// flag: argparse's store_true, an option that takes no value; the
	// parse stores "true" under its name.
	flag bool
}

// parserSpec is the option table of one (sub-)parser.
type parserSpec struct {
	options []optionSpec
	// version adds argparse's --version action (the top-level parser only).
	version bool
	// positionals name values that are not options, each optional, taken
	// in order from the tokens no option took (stored under these names).
	positionals []string
}

const (
	helpOption    = -1
	versionOption = -3
)

type tokenKind int

const (
	kindValue tokenKind = iota
	kindOption
	kindDashDash
)

type token struct {
	kind     tokenKind
	text     string
	option   int // index into options, helpOption, versionOption, or unknownOption
	explicit *string
	short    bool // "-h..." form
}

const unknownOption = -2

// optionStrings lists every option string of the parser, help included.
func (p parserSpec) optionStrings() []string {
	out := []string{"-h", "--help"}
	if p.version {
		out = append(out, "--version")
	}
	for _, o := range p.options {
		out = append(out, o.name)
	}
	return out
}

func (p parserSpec) lookup(name string) (int, bool) {
	switch name {
	case "-h", "--help":
		return helpOption, true
	case "--version":
		if p.version {
			return versionOption, true
		}
	}
	for i, o := range p.options {
		if o.name == name {
			return i, true
		}
	}
	return 0, false
}

// looksNegative is argparse's ^-\d+$|^-\d*\.\d+$ (Python's \d is any Unicode
// decimal digit, and $ also matches before a final newline).
func looksNegative(s string) bool {
	s = strings.TrimSuffix(s, "\n")
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	body := s[1:]
	allDigits := func(t string) bool {
		if t == "" {
			return false
		}
		for _, r := range t {
			if !unicode.IsDigit(r) {
				return false
			}
		}
		return true
	}
	if allDigits(body) {
		return true
	}
	before, after, found := strings.Cut(body, ".")
	return found && allDigits(after) && (before == "" || allDigits(before))
}

// classify turns argv into tokens; ambiguity is reported at once.
func (p parserSpec) classify(args []string) ([]token, error) {
	toks := make([]token, 0, len(args))
	for i, a := range args {
		if a == "--" {
			toks = append(toks, token{kind: kindDashDash, text: a})
			for _, rest := range args[i+1:] {
				toks = append(toks, token{kind: kindValue, text: rest})
			}
			break
		}
		t, err := p.classifyOne(a)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
	}
	return toks, nil
}

func (p parserSpec) classifyOne(a string) (token, error) {
	value := token{kind: kindValue, text: a}
	if a == "" || a[0] != '-' {
		return value, nil
	}
	if idx, ok := p.lookup(a); ok {
		return token{kind: kindOption, text: a, option: idx, short: a == "-h"}, nil
	}
	if len(a) == 1 {
		return value, nil
	}
	if name, arg, found := strings.Cut(a, "="); found {
		if idx, ok := p.lookup(name); ok {
			return token{kind: kindOption, text: a, option: idx, explicit: &arg, short: name == "-h"}, nil
		}
	}
	// Prefix matching.
	type match struct {
		idx      int
		explicit *string
		short    bool
	}
	var matches []match
	var names []string
	if a[1] == '-' {
		prefix, arg, found := strings.Cut(a, "=")
		var explicit *string
		if found {
			explicit = &arg
		}
		for _, s := range p.optionStrings() {
			if strings.HasPrefix(s, prefix) {
				idx, _ := p.lookup(s)
				matches = append(matches, match{idx, explicit, false})
				names = append(names, s)
			}
		}
	} else {
		for _, s := range p.optionStrings() {
			if s == a[:2] {
				idx, _ := p.lookup(s)
				rest := a[2:]
				matches = append(matches, match{idx, &rest, true})
				names = append(names, s)
			} else if strings.HasPrefix(s, a) {
				idx, _ := p.lookup(s)
				matches = append(matches, match{idx, nil, false})
				names = append(names, s)
			}
		}
	}
	if len(matches) > 1 {
		return token{}, misuse("ambiguous option: %s could match %s", optionName(a), strings.Join(names, ", "))
	}
	if len(matches) == 1 {
		m := matches[0]
		return token{kind: kindOption, text: a, option: m.idx, explicit: m.explicit, short: m.short}, nil
	}
	if looksNegative(a) || strings.Contains(a, " ") {
		return value, nil
	}
	return token{kind: kindOption, text: a, option: unknownOption}, nil
}

// optionName is the option part of a token, without any "=value", so that
// error messages never echo a value.
func optionName(a string) string {
	name, _, _ := strings.Cut(a, "=")
	return name
}

// parsed is the result of a sub-parser run.
type parsed struct {
	values map[string]string
	help   bool
}

// parse runs the parser over args like argparse's parse_args.
func (p parserSpec) parse(args []string) (parsed, error) {
	toks, err := p.classify(args)
	if err != nil {
		return parsed{}, err
	}
	out := parsed{values: map[string]string{}}
	var extras []string
	taken := 0 // positionals
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == kindValue && taken < len(p.positionals) {
			out.values[p.positionals[taken]] = t.text
			taken++
			continue
		}
		if t.kind != kindOption {
			extras = append(extras, t.text)
			continue
		}
		switch t.option {
		case unknownOption:
			extras = append(extras, t.text)
			continue
		case helpOption:
			if t.explicit != nil {
				// "-hh" runs help twice; any other glued text is misuse.
				if !t.short || *t.explicit == "" || strings.Trim(*t.explicit, "h") != "" {
					return parsed{}, misuse("argument -h/--help: ignored explicit argument")
				}
			}
			return parsed{help: true}, nil
		}
		opt := p.options[t.option]
		if opt.flag {
			if t.explicit != nil {
				return parsed{}, misuse("argument %s: ignored explicit argument", opt.name)
			}
			out.values[opt.name] = "true"
			continue
		}
		var val string
		if t.explicit != nil {
			val = *t.explicit
		} else {
			// The next token must be a value; Python 3.11.7 neither skips
			// nor takes "--" here (it stays behind as an unrecognized token).
			j := i + 1
			if j >= len(toks) || toks[j].kind != kindValue {
				return parsed{}, misuse("argument %s: expected one argument", opt.name)
			}
			val = toks[j].text
			i = j
		}
		if opt.convert != nil {
			if err := opt.convert(val); err != nil {
				return parsed{}, misuse("argument %s: %v", opt.name, err)
			}
		}
		out.values[opt.name] = val
	}
	var missing []string
	for _, o := range p.options {
		if _, ok := out.values[o.name]; o.required && !ok {
			missing = append(missing, o.name)
		}
	}
	if len(missing) > 0 {
		return parsed{}, misuse("the following arguments are required: %s", strings.Join(missing, ", "))
	}
	if len(extras) > 0 {
		return parsed{}, misuse("unrecognized arguments (%d)", len(extras))
	}
	return out, nil
}
