package ledgercli

import (
	"errors"
	"strings"
)

// errUsage marks a command line the reference's argparse would reject. The
// CLI reports it as InvalidInput; stdout never shows more than the class.
var errUsage = errors.New("usage error")

// Usage errors with their fixed reasons (shown only under
// TASK_STATE_GUARD_EXPLAIN=1); each matches errUsage.
var (
	errAmbiguousOption = explained(errUsage, "an abbreviated option matches more than one option")
	errUnknownCommand  = explained(errUsage, "unknown command")
	errNoCommand       = explained(errUsage, "no command given")
	errFlagWithValue   = explained(errUsage, "a flag that takes no value was given one")
	errMissingValue    = explained(errUsage, "an option lacks its value")
	errBadNumber       = explained(errUsage, "an option value is not a number")
	errBadChoice       = explained(errUsage, "an option value is not one of its allowed words")
	errMissingRequired = explained(errUsage, "a required option or argument is missing")
	errUnrecognized    = explained(errUsage, "unrecognized option or extra argument")
)

// option describes one optional argument the way argparse sees it.
type option struct {
	names      []string // every spelling, e.g. {"-h", "--help"}
	key        string   // where the value is stored
	takesValue bool     // false: a flag (store_true, help, version)
	choices    []string // allowed values, nil for any
	// typeCheck stands in for argparse's type= conversion, which runs when
	// the value is consumed (so before a later --help).
	typeCheck func(string) bool
	required  bool
	// repeatable keeps every value given (argparse's action="append") in
	// parseResult.lists; otherwise the last one wins.
	repeatable bool
}

// parserSpec is one argparse parser: the top level or a subcommand.
type parserSpec struct {
	options     []option
	positionals []string // names of single-value positionals, in order
	// subcommands, when set, makes the first positional a subcommand name
	// that swallows every remaining argument (argparse's PARSER nargs).
	subcommands []string
}

// parseResult is what one parser collected.
type parseResult struct {
	values      map[string]string   // option key or positional name -> value
	lists       map[string][]string // repeatable option key -> values in order
	flags       map[string]bool     // flag key -> seen
	help        bool                // -h/--help was consumed (print help, exit 0)
	version     bool                // --version was consumed
	subcommand  string
	rest        []string // arguments after the subcommand name
	unknownArgs bool     // argparse "unrecognized arguments"
}

// optionMatch is a classified command-line word.
type optionMatch struct {
	opt         *option
	spelling    string
	explicitArg *string // text after '=' (or after a short flag's letter)
}

func (p *parserSpec) lookup(spelling string) *option {
	for i := range p.options {
		for _, n := range p.options[i].names {
			if n == spelling {
				return &p.options[i]
			}
		}
	}
	return nil
}

// classify mirrors argparse's _parse_optional (Python 3.11): it returns
// (nil, false, nil) for a positional word, (match, true, nil) for an option
// (match.opt nil when unknown), and errAmbiguousOption for an ambiguous
// abbreviation.
func (p *parserSpec) classify(word string) (*optionMatch, bool, error) {
	if word == "" || word[0] != '-' {
		return nil, false, nil
	}
	if o := p.lookup(word); o != nil {
		return &optionMatch{opt: o, spelling: word}, true, nil
	}
	if len(word) == 1 {
		return nil, false, nil
	}
	if i := strings.IndexByte(word, '='); i >= 0 {
		if o := p.lookup(word[:i]); o != nil {
			arg := word[i+1:]
			return &optionMatch{opt: o, spelling: word[:i], explicitArg: &arg}, true, nil
		}
	}
	matches := p.prefixMatches(word)
	if len(matches) > 1 {
		return nil, false, errAmbiguousOption
	}
	if len(matches) == 1 {
		return &matches[0], true, nil
	}
	if isNegativeNumberLike(word) {
		// None of our parsers has an option that looks like a negative
		// number, so argparse treats "-5" and "-.5" as values.
		return nil, false, nil
	}
	if strings.Contains(word, " ") {
		return nil, false, nil
	}
	return &optionMatch{spelling: word}, true, nil
}

// prefixMatches mirrors argparse's _get_option_tuples: unique-prefix
// abbreviation of long options, and a short flag glued to its argument.
func (p *parserSpec) prefixMatches(word string) []optionMatch {
	var out []optionMatch
	if strings.HasPrefix(word, "--") {
		prefix, explicit, hasExplicit := strings.Cut(word, "=")
		for i := range p.options {
			for _, n := range p.options[i].names {
				if strings.HasPrefix(n, prefix) {
					m := optionMatch{opt: &p.options[i], spelling: n}
					if hasExplicit {
						arg := explicit
						m.explicitArg = &arg
					}
					out = append(out, m)
				}
			}
		}
		return out
	}
	short, glued := word[:2], word[2:]
	for i := range p.options {
		for _, n := range p.options[i].names {
			switch {
			case n == short:
				arg := glued
				out = append(out, optionMatch{opt: &p.options[i], spelling: n, explicitArg: &arg})
			case strings.HasPrefix(n, word):
				out = append(out, optionMatch{opt: &p.options[i], spelling: n})
			}
		}
	}
	return out
}

// isNegativeNumberLike is argparse's _negative_number_matcher,
// ^-\d+$|^-\d*\.\d+$, where \d is any Unicode decimal digit.
func isNegativeNumberLike(word string) bool {
	body := []rune(word[1:])
	if len(body) == 0 {
		return false
	}
	dot := -1
	for i, r := range body {
		if r == '.' && dot < 0 {
			dot = i
			continue
		}
		if !isUnicodeDecimal(r) {
			return false
		}
	}
	return dot < 0 || dot < len(body)-1
}

// parse runs one parser over args in argparse's order: every word is
// classified first (an ambiguous abbreviation fails before anything else),
// then words are consumed left to right, so a help flag reached before any
// error wins, and an error reached first wins over a later help flag.
func (p *parserSpec) parse(args []string) (*parseResult, error) {
	type word struct {
		text   string
		match  *optionMatch
		isOpt  bool
		quoted bool // after "--": always a value
	}
	words := make([]word, 0, len(args))
	afterDashDash := false
	for _, a := range args {
		if afterDashDash {
			words = append(words, word{text: a, quoted: true})
			continue
		}
		if a == "--" {
			if len(p.subcommands) > 0 {
				// argparse hands "--" to the subcommand slot verbatim,
				// where it is no valid command name.
				words = append(words, word{text: a})
				continue
			}
			afterDashDash = true
			continue
		}
		m, isOpt, err := p.classify(a)
		if err != nil {
			return nil, err
		}
		words = append(words, word{text: a, match: m, isOpt: isOpt})
	}

	res := &parseResult{values: map[string]string{}, lists: map[string][]string{}, flags: map[string]bool{}}
	nextPositional := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !w.isOpt {
			if len(p.subcommands) > 0 {
				if !contains(p.subcommands, w.text) {
					return nil, errUnknownCommand
				}
				res.subcommand = w.text
				for _, rest := range words[i+1:] {
					res.rest = append(res.rest, rest.text)
				}
				break
			}
			if nextPositional < len(p.positionals) {
				res.values[p.positionals[nextPositional]] = w.text
				nextPositional++
			} else {
				res.unknownArgs = true
			}
			continue
		}
		m := w.match
		if m.opt == nil {
			res.unknownArgs = true
			continue
		}
		if !m.opt.takesValue {
			if m.explicitArg != nil {
				// Only a run of glued short help flags ("-hh") survives.
				if m.spelling != "-h" || *m.explicitArg == "" || strings.Trim(*m.explicitArg, "h") != "" {
					return nil, errFlagWithValue
				}
			}
			switch m.opt.key {
			case "help":
				res.help = true
				return res, nil
			case "version":
				res.version = true
				return res, nil
			}
			res.flags[m.opt.key] = true
			continue
		}
		var value string
		switch {
		case m.explicitArg != nil:
			value = *m.explicitArg
		case i+1 < len(words) && !words[i+1].isOpt && !(len(p.subcommands) > 0 && words[i+1].text == "--"):
			i++
			value = words[i].text
		default:
			return nil, errMissingValue // "expected one argument"
		}
		if m.opt.typeCheck != nil && !m.opt.typeCheck(value) {
			return nil, errBadNumber
		}
		if m.opt.choices != nil && !contains(m.opt.choices, value) {
			return nil, errBadChoice
		}
		res.values[m.opt.key] = value
		if m.opt.repeatable {
			res.lists[m.opt.key] = append(res.lists[m.opt.key], value)
		}
	}
	if len(p.subcommands) > 0 && res.subcommand == "" {
		// No subcommand: argparse reports the missing positional.
		return nil, errNoCommand
	}
	return res, nil
}

// checkComplete applies argparse's end-of-parse checks: required options
// and positionals present, nothing unrecognised left over.
func (p *parserSpec) checkComplete(res *parseResult) error {
	for _, o := range p.options {
		if o.required {
			if _, ok := res.values[o.key]; !ok {
				return errMissingRequired
			}
		}
	}
	for _, name := range p.positionals {
		if _, ok := res.values[name]; !ok {
			return errMissingRequired
		}
	}
	if res.unknownArgs {
		return errUnrecognized
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
