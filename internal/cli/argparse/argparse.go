// Package argparse reads a command line by the rules of Python 3.11's
// argparse, for the parser shapes the two command lines use: long options
// (with unique-prefix abbreviation and "=value"), -h/--help, --version,
// flags, options that take one value (the last one wins, or every one is
// kept), single-value positionals (required, or optional as nargs="?"), and
// a final subcommand slot that takes every remaining word.
//
// Both reference tools are Python programs whose argparse decided which
// command lines run; reproducing its rules here, in one place, keeps
// sweep-state and task-state-guard from drifting apart on the same input.
// Parse decides what argparse decides while it reads: how each word is
// classified, which value an option takes, when help or --version stops
// the parse, and the errors argparse raises on the spot (an ambiguous
// abbreviation, a flag given a value, an option without its value, a value
// its conversion or choices refuse). The checks argparse makes once the
// words are read (required options, leftover words, an unknown subcommand)
// are left to the caller as data (Result.Missing, Result.Extras,
// Result.Command), because each command line reports them in its own
// order and words.
//
// Word classes (argparse's _parse_optional, decided before anything runs):
//   - the first "--" ends options; every later word is a value;
//   - "", "-", words not starting with '-', words that look like negative
//     numbers (-5, -.5, -1.25, Unicode digits too, and a single final
//     newline, which Python's "$" lets through) and words holding a space
//     are values: no parser here has an option that looks like a number;
//   - an option's exact name, "--name=value", a unique prefix of a long
//     option (with or without "=value"), and a one-letter option with text
//     glued on ("-hh") are options;
//   - an ambiguous prefix is an error at once;
//   - any other word starting with '-' is an unknown option, left over.
//
// An option that takes a value takes the next word only when it is a
// value: an option word or "--" is never taken.
//
// Errors hold option names (and an ambiguous abbreviation's text before any
// "="), never a value from the command line.
//
// Two corners of argparse are not reproduced: a one-letter option that
// takes a value glued after a flag ("-hx" with -x taking one; only -h has
// one letter here, so it is refused), and "--opt=--", which Python's
// argparse turns into an empty list (here the value is "--").
package argparse

import (
	"regexp"
	"strings"
	"unicode"
)

// Kind is what an option does when it is read.
type Kind int

const (
	// Store takes one value; a later one replaces it.
	Store Kind = iota
	// Append takes one value each time and keeps them all, in order.
	Append
	// Flag takes no value and records that it was given (store_true).
	Flag
	// Help stops the parse: the caller prints help.
	Help
	// Version stops the parse: the caller prints its version.
	Version
)

// Option is one optional argument.
type Option struct {
	Names    []string // every spelling, e.g. {"-h", "--help"}
	Key      string   // where Result keeps its value
	Kind     Kind
	Required bool
	// Choices, when set, are the only values allowed (checked after Type).
	Choices []string
	// Type stands in for argparse's type= conversion: it runs when the
	// option is read, so a refused value wins over a later --help.
	Type func(string) error
}

// HelpOption is argparse's -h/--help, which every parser has.
var HelpOption = Option{Names: []string{"-h", "--help"}, Key: "help", Kind: Help}

// Parser is one argparse parser: the top level or a subcommand's.
type Parser struct {
	Options []Option
	// Positionals names the single-value positionals, in order.
	Positionals []string
	// OptionalPositionals names single-value positionals that may be left
	// out (argparse's nargs="?"), in order after Positionals.
	OptionalPositionals []string
	// Subcommand adds a final positional that takes the subcommand's name
	// and every word after it (argparse's add_subparsers).
	Subcommand bool
}

// Result is what a parse read.
type Result struct {
	Values map[string]string   // an option's Key or a positional's name -> value
	Lists  map[string][]string // an Append option's Key -> values in order
	Flags  map[string]bool     // a Flag option's Key -> given
	// Help or Version is set when that option stopped the parse; nothing
	// else in the Result is then complete.
	Help, Version bool
	// Command is the word in the subcommand slot ("" when none), Rest the
	// words after it. The caller checks the name.
	Command string
	Rest    []string
	// Extras are the words no option or positional took, in argparse's
	// order (argparse's "unrecognized arguments").
	Extras []string
	// Missing names the required options and positionals not given, in
	// the parser's order (the subcommand slot as "command").
	Missing []string
}

// ErrorKind says which of argparse's immediate errors happened.
type ErrorKind int

const (
	// Ambiguous: an abbreviation matches more than one option.
	Ambiguous ErrorKind = iota
	// ExplicitArgument: an option that takes no value was given one.
	ExplicitArgument
	// ExpectedOne: an option that takes a value has none after it.
	ExpectedOne
	// InvalidValue: the option's Type refused the value.
	InvalidValue
	// InvalidChoice: the value is not one of the option's Choices.
	InvalidChoice
)

// Error is an error argparse raises while it reads. It holds option names,
// never a value.
type Error struct {
	Kind ErrorKind
	// Option is the option's display name, its spellings joined by "/"
	// ("-h/--help"); for Ambiguous, the word's text before any "=".
	Option string
	// Matches are the option strings an ambiguous word could match.
	Matches []string
	// Err is what Type returned, for InvalidValue.
	Err error
}

func (e *Error) Error() string {
	switch e.Kind {
	case Ambiguous:
		return "ambiguous option: " + e.Option + " could match " + strings.Join(e.Matches, ", ")
	case ExplicitArgument:
		return "argument " + e.Option + ": ignored explicit argument"
	case ExpectedOne:
		return "argument " + e.Option + ": expected one argument"
	case InvalidValue:
		return "argument " + e.Option + ": " + e.Err.Error()
	default:
		return "argument " + e.Option + ": invalid choice"
	}
}

func (e *Error) Unwrap() error { return e.Err }

// DisplayName is argparse's name for an option in messages.
func (o *Option) DisplayName() string { return strings.Join(o.Names, "/") }

func (o *Option) takesValue() bool { return o.Kind == Store || o.Kind == Append }

// LooksNegative is argparse's _negative_number_matcher, ^-\d+$|^-\d*\.\d+$:
// Python's \d is any Unicode decimal digit, and its $ also matches before a
// final newline.
func LooksNegative(s string) bool {
	s = strings.TrimSuffix(s, "\n")
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	allDigits := func(t string) bool {
		if t == "" {
			return false
		}
		for _, r := range t {
			if !unicode.Is(unicode.Nd, r) {
				return false
			}
		}
		return true
	}
	body := s[1:]
	if allDigits(body) {
		return true
	}
	before, after, found := strings.Cut(body, ".")
	return found && allDigits(after) && (before == "" || allDigits(before))
}

// optionWord is a word classified as an option.
type optionWord struct {
	opt      *Option // nil: unknown
	spelling string  // the option string matched
	explicit *string // text after "=" or after a one-letter option
}

func (p *Parser) lookup(spelling string) *Option {
	for i := range p.Options {
		for _, n := range p.Options[i].Names {
			if n == spelling {
				return &p.Options[i]
			}
		}
	}
	return nil
}

// classify is argparse's _parse_optional: nil for a value.
func (p *Parser) classify(word string) (*optionWord, error) {
	if word == "" || word[0] != '-' {
		return nil, nil
	}
	if o := p.lookup(word); o != nil {
		return &optionWord{opt: o, spelling: word}, nil
	}
	if len(word) == 1 {
		return nil, nil
	}
	if name, arg, found := strings.Cut(word, "="); found {
		if o := p.lookup(name); o != nil {
			return &optionWord{opt: o, spelling: name, explicit: &arg}, nil
		}
	}
	matches := p.prefixMatches(word)
	if len(matches) > 1 {
		e := &Error{Kind: Ambiguous, Option: strings.SplitN(word, "=", 2)[0]}
		for _, m := range matches {
			e.Matches = append(e.Matches, m.spelling)
		}
		return nil, e
	}
	if len(matches) == 1 {
		return &matches[0], nil
	}
	if LooksNegative(word) || strings.Contains(word, " ") {
		return nil, nil
	}
	return &optionWord{spelling: word}, nil
}

// prefixMatches is argparse's _get_option_tuples: a unique prefix of a long
// option, or a one-letter option with text glued on, in the order the
// options were declared.
func (p *Parser) prefixMatches(word string) []optionWord {
	var out []optionWord
	if word[1] == '-' {
		prefix, arg, found := strings.Cut(word, "=")
		for i := range p.Options {
			for _, n := range p.Options[i].Names {
				if strings.HasPrefix(n, prefix) {
					m := optionWord{opt: &p.Options[i], spelling: n}
					if found {
						explicit := arg
						m.explicit = &explicit
					}
					out = append(out, m)
				}
			}
		}
		return out
	}
	short, glued := word[:2], word[2:]
	for i := range p.Options {
		for _, n := range p.Options[i].Names {
			switch {
			case n == short:
				out = append(out, optionWord{opt: &p.Options[i], spelling: n, explicit: &glued})
			case strings.HasPrefix(n, word):
				out = append(out, optionWord{opt: &p.Options[i], spelling: n})
			}
		}
	}
	return out
}

// Parse reads args as argparse's parse_known_args does for p. It returns
// an *Error for argparse's immediate errors; everything else is in the
// Result.
func (p *Parser) Parse(args []string) (*Result, error) {
	// Classify every word first, as argparse does, so an ambiguous
	// abbreviation anywhere fails before anything is read. The pattern
	// holds one letter a word: 'O' option, 'A' value, '-' the first "--".
	options := make(map[int]*optionWord)
	pattern := make([]byte, len(args))
	for i, a := range args {
		if a == "--" {
			pattern[i] = '-'
			for j := i + 1; j < len(args); j++ {
				pattern[j] = 'A'
			}
			break
		}
		w, err := p.classify(a)
		if err != nil {
			return nil, err
		}
		if w == nil {
			pattern[i] = 'A'
			continue
		}
		pattern[i] = 'O'
		options[i] = w
	}

	r := &parse{p: p, args: args, pattern: string(pattern), res: &Result{
		Values: map[string]string{}, Lists: map[string][]string{}, Flags: map[string]bool{},
	}, seen: map[string]bool{}}
	for _, name := range p.Positionals {
		r.positionals = append(r.positionals, positional{name, positionalPattern})
	}
	for _, name := range p.OptionalPositionals {
		r.positionals = append(r.positionals, positional{name, optionalPattern})
	}
	if p.Subcommand {
		r.positionals = append(r.positionals, positional{subcommandSlot, subcommandPattern})
	}

	// argparse's loop: the values before each option go to the
	// positionals still wanted (or are left over), then the option runs.
	lastOption := -1
	for i := range options {
		lastOption = max(lastOption, i)
	}
	start := 0
	for start <= lastOption {
		next := start
		for options[next] == nil {
			next++
		}
		if start != next {
			end := r.consumePositionals(start)
			if end > start {
				start = end
				continue
			}
		}
		if options[start] == nil {
			r.res.Extras = append(r.res.Extras, args[start:next]...)
			start = next
		}
		var stop bool
		var err error
		start, stop, err = r.consumeOption(start, options[start])
		if err != nil || stop {
			return r.res, err
		}
	}
	stop := r.consumePositionals(start)
	r.res.Extras = append(r.res.Extras, args[stop:]...)

	for i := range p.Options {
		if o := &p.Options[i]; o.Required && !r.seen[o.Key] {
			r.res.Missing = append(r.res.Missing, o.DisplayName())
		}
	}
	for _, w := range r.positionals {
		if w.pattern != optionalPattern {
			r.res.Missing = append(r.res.Missing, w.name)
		}
	}
	return r.res, nil
}

// subcommandSlot names the subcommand positional in Result.Missing.
const subcommandSlot = "command"

type parse struct {
	p           *Parser
	args        []string
	pattern     string
	res         *Result
	seen        map[string]bool // option keys read
	positionals []positional    // still wanted, in order
}

// positional is a positional still wanted, with its nargs pattern.
type positional struct {
	name    string
	pattern string
}

// consumeOption is argparse's consume_optional for the option word at i.
// It returns the index after what the option took, and stop when help or
// --version ended the parse.
func (r *parse) consumeOption(i int, w *optionWord) (int, bool, error) {
	if w.opt == nil {
		r.res.Extras = append(r.res.Extras, r.args[i])
		return i + 1, false, nil
	}
	opt, explicit := w.opt, w.explicit
	if !opt.takesValue() {
		// A one-letter option glued to more letters ("-hh") reads each
		// letter as an option of its own; any other given text is an error
		// before any of them acts.
		acts := []*Option{opt}
		spelling := w.spelling
		for explicit != nil {
			if spelling[1] == '-' || *explicit == "" {
				return 0, false, &Error{Kind: ExplicitArgument, Option: opt.DisplayName()}
			}
			spelling = "-" + (*explicit)[:1]
			next := r.p.lookup(spelling)
			if next == nil || next.takesValue() {
				return 0, false, &Error{Kind: ExplicitArgument, Option: opt.DisplayName()}
			}
			opt = next
			acts = append(acts, opt)
			if rest := (*explicit)[1:]; rest != "" {
				explicit = &rest
			} else {
				explicit = nil
			}
		}
		for _, o := range acts {
			r.seen[o.Key] = true
			switch o.Kind {
			case Help:
				r.res.Help = true
				return 0, true, nil
			case Version:
				r.res.Version = true
				return 0, true, nil
			}
			r.res.Flags[o.Key] = true
		}
		return i + 1, false, nil
	}
	next := i + 1
	var value string
	switch {
	case explicit != nil:
		value = *explicit
	case next < len(r.args) && r.pattern[next] == 'A':
		value = r.args[next]
		next++
	default:
		return 0, false, &Error{Kind: ExpectedOne, Option: opt.DisplayName()}
	}
	if opt.Type != nil {
		if err := opt.Type(value); err != nil {
			return 0, false, &Error{Kind: InvalidValue, Option: opt.DisplayName(), Err: err}
		}
	}
	if opt.Choices != nil && !contains(opt.Choices, value) {
		return 0, false, &Error{Kind: InvalidChoice, Option: opt.DisplayName()}
	}
	r.seen[opt.Key] = true
	r.res.Values[opt.Key] = value
	if opt.Kind == Append {
		r.res.Lists[opt.Key] = append(r.res.Lists[opt.Key], value)
	}
	return next, false, nil
}

// Patterns of argparse's nargs over the word classes: a single-value
// positional takes one value and any "--" around it, an optional one
// (nargs="?") at most one value, and the subcommand slot a value and
// everything after it.
const (
	positionalPattern = "(-*A-*)"
	optionalPattern   = "(-*A?-*)"
	subcommandPattern = "(-*A[-AO]*)"
)

// consumePositionals is argparse's consume_positionals at start: as many
// of the wanted positionals as the words from start can fill, matched
// together by argparse's regular expressions (Go's leftmost-first choice
// of submatches is Python's).
func (r *parse) consumePositionals(start int) int {
	rest := r.pattern[start:]
	for n := len(r.positionals); n > 0; n-- {
		var expr strings.Builder
		expr.WriteString("^")
		for _, w := range r.positionals[:n] {
			expr.WriteString(w.pattern)
		}
		m := regexp.MustCompile(expr.String()).FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		for k, w := range r.positionals[:n] {
			words := r.args[start : start+len(m[k+1])]
			start += len(m[k+1])
			if w.pattern == subcommandPattern {
				r.res.Command, r.res.Rest = words[0], words[1:]
				continue
			}
			// argparse drops the first "--" from a positional's words.
			for j, word := range words {
				if word == "--" {
					words = append(words[:j:j], words[j+1:]...)
					break
				}
			}
			// An optional positional given no value keeps no value.
			if len(words) > 0 {
				r.res.Values[w.name] = words[0]
			}
		}
		r.positionals = r.positionals[n:]
		return start
	}
	return start
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
