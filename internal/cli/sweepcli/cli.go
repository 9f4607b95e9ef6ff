package sweepcli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/stateguard/stateguard/internal/cli/argparse"
	"github.com/stateguard/stateguard/internal/cli/version"
	"github.com/stateguard/stateguard/internal/codec/pyjson"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
	"github.com/stateguard/stateguard/internal/storage/outtext"
	"github.com/stateguard/stateguard/model/value"
)

// ExplainEnv names the environment variable that, set to exactly "1", makes
// a CORRUPT answer also write one line "sweep-state: CORRUPT: REASON" on
// stderr. REASON is the engine's fixed phrase (Result.Reason), which a line
// number may precede; it never holds a path or a value from the file or the
// command line. stdout and the exit status are unchanged.
const ExplainEnv = "SWEEP_STATE_EXPLAIN"

// Clock is the wall clock used when a command has no --now (or an empty
// one). Tests replace it; nothing else reads time.
var Clock = time.Now

// subcommand is one entry of the command table.
type subcommand struct {
	name    string
	summary string
	spec    parserSpec
	build   func(v map[string]string) sweepcore.Command
}

// acting is a subcommand that runs on its own rather than as one Command
// of the engine's Run (merge and merge-driver name no --state).
type acting struct {
	act func(v map[string]string, stdout, stderr io.Writer) int
	// check refuses, as misuse, a combination the parse cannot judge.
	check func(v map[string]string) error
	// positionalHelp describes spec.positionals, one line each, and usage
	// is the usage line's tail after "[-h]".
	positionalHelp []string
	usage          string
}

// actings holds the subcommands of the table whose build is nil.
var actings = map[string]acting{
	"merge":   {act: runMerge},
	"metrics": {act: runMetrics},
	"merge-driver": {act: runMergeDriver, check: checkDriverArgs,
		positionalHelp: []string{"O A B [P]             git's %O %A %B %P: base, ours (written), theirs, the path's name"},
		usage:          " [--install] [O A B [P]]"},
}

// usageError is misuse with a one-line message for stderr.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func misuse(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// optionSpec is one long option that takes a value, with its help text.
type optionSpec struct {
	name     string // "--state"
	required bool
	metavar  string
	help     string
	// convert checks the value when the option is read; an error is
	// misuse.
	convert func(string) error
	// flag: argparse's store_true, an option that takes no value; the
	// parse stores "true" under its name.
	flag bool
}

// parserSpec is the option table of one subcommand.
type parserSpec struct {
	options []optionSpec
	// positionals name values that are not options, each optional
	// (argparse's nargs="?"), stored under these names.
	positionals []string
}

// parser is the argparse parser of the table: -h/--help and the options.
func (p parserSpec) parser() *argparse.Parser {
	out := &argparse.Parser{Options: []argparse.Option{argparse.HelpOption}, OptionalPositionals: p.positionals}
	for _, o := range p.options {
		kind := argparse.Store
		if o.flag {
			kind = argparse.Flag
		}
		out.Options = append(out.Options, argparse.Option{
			Names: []string{o.name}, Key: o.name, Kind: kind, Required: o.required, Type: o.convert,
		})
	}
	return out
}

func req(name, metavar, help string) optionSpec {
	return optionSpec{name: name, required: true, metavar: metavar, help: help}
}

func opt(name, metavar, help string) optionSpec {
	return optionSpec{name: name, metavar: metavar, help: help}
}

var (
	stateOpt  = req("--state", "PATH", "the YAML state file")
	writerOpt = req("--writer", "W", "id of the writer (lease holder)")
	nowOpt    = nowOption()
)

func nowOption() optionSpec {
	return opt("--now", "T", "time to stamp, stored verbatim (default: current UTC time)")
}

func ttlOption() optionSpec {
	o := opt("--ttl-minutes", "N", "lease time to live in minutes (default 60)")
	o.convert = func(s string) error {
		_, err := sweeprules.ParseTTL(s)
		return err
	}
	return o
}

func outcomeOption() optionSpec {
	o := req("--outcome", "O", "one of "+strings.Join(sweeprules.Outcomes(), ", "))
	o.convert = sweeprules.CheckOutcome
	return o
}

// commands is the command table, in help order.
var commands = []subcommand{
	{"read", "print the whole state as JSON", parserSpec{options: []optionSpec{stateOpt}},
		func(map[string]string) sweepcore.Command { return sweepcore.Read{} }},
	{"validate", "downgrade closed items that lack evidence to fix_pending", parserSpec{options: []optionSpec{stateOpt}},
		func(map[string]string) sweepcore.Command { return sweepcore.Validate{} }},
	{"upsert-item", "merge a JSON object into item <source>:<id> (lease holder only)", parserSpec{options: []optionSpec{
		stateOpt, req("--source", "S", "source id"), req("--id", "I", "item id within the source"),
		req("--json", "OBJ", "JSON object of fields to set"), writerOpt, nowOpt}},
		func(v map[string]string) sweepcore.Command {
			return sweepcore.UpsertItem{Source: v["--source"], ID: v["--id"], JSON: v["--json"], Writer: v["--writer"], Now: v["--now"]}
		}},
	{"cursor-get", "print a source's resume cursor", parserSpec{options: []optionSpec{stateOpt, req("--source", "S", "source id")}},
		func(v map[string]string) sweepcore.Command { return sweepcore.CursorGet{Source: v["--source"]} }},
	{"cursor-advance", "move a source's cursor forward past a recorded item (lease holder only)", parserSpec{options: []optionSpec{
		stateOpt, req("--source", "S", "source id"), req("--to", "C", "new cursor"),
		req("--past-item", "I", "id of the item the cursor moves past"), writerOpt, nowOpt}},
		func(v map[string]string) sweepcore.Command {
			return sweepcore.CursorAdvance{Source: v["--source"], To: v["--to"], PastItem: v["--past-item"], Writer: v["--writer"], Now: v["--now"]}
		}},
	{"lease-acquire", "take, refresh or reclaim the single-writer lease", parserSpec{options: []optionSpec{
		stateOpt, writerOpt, ttlOption(), nowOpt}},
		func(v map[string]string) sweepcore.Command {
			c := sweepcore.LeaseAcquire{Writer: v["--writer"], Now: v["--now"]}
			if s, ok := v["--ttl-minutes"]; ok {
				c.TTLMinutes, _ = sweeprules.ParseTTL(s) // checked by the parse
			}
			return c
		}},
	{"lease-release", "give the lease up", parserSpec{options: []optionSpec{stateOpt, writerOpt}},
		func(v map[string]string) sweepcore.Command { return sweepcore.LeaseRelease{Writer: v["--writer"]} }},
	{"run-record", "record the outcome of a run in last_run", parserSpec{options: []optionSpec{
		stateOpt, writerOpt, outcomeOption(), req("--counts", "JSON", "JSON counts"),
		req("--timestamp", "T", "time of the run, stored verbatim")}},
		func(v map[string]string) sweepcore.Command {
			return sweepcore.RunRecord{Writer: v["--writer"], Outcome: v["--outcome"], Counts: v["--counts"], Timestamp: v["--timestamp"]}
		}},
	{"metrics", "print counts for monitoring in Prometheus's text format", parserSpec{options: []optionSpec{
		stateOpt, opt("--now", "T", "time the lease's and last run's ages are measured at (default: current UTC time)"),
		opt("--to", "FILE", "replace FILE with the metrics, atomically, instead of printing them")}},
		nil},
	{"import-legacy", "import cursors and items from a legacy state file", parserSpec{options: []optionSpec{
		stateOpt, req("--file", "F", "legacy file (JSON or the YAML subset)"),
		opt("--source-map", "JSON", "JSON object mapping channel ids to source ids")}},
		func(v map[string]string) sweepcore.Command {
			c := sweepcore.ImportLegacy{File: v["--file"]}
			if s, ok := v["--source-map"]; ok {
				c.SourceMap = &s
			}
			return c
		}},
	{"merge", "three-way merge of state files into --ours (spec 21)", parserSpec{options: []optionSpec{
		req("--base", "O", "the common ancestor (a missing file is an empty state)"),
		req("--ours", "A", "our side; the merge is written here, under its lock"),
		req("--theirs", "B", "their side"), publishedOption()}}, nil},
	{"merge-driver", "git's merge driver for state files, or --install to configure it", parserSpec{
		options:     []optionSpec{{name: "--install", flag: true, help: "configure the driver in this repository's .git/config"}},
		positionals: []string{"O", "A", "B", "P"}}, nil},
}

// topParser is the top-level parser: only -h/--help and --version before
// the subcommand.
var topParser = argparse.Parser{
	Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--version"}, Key: "version", Kind: argparse.Version},
	},
	Subcommand: true,
}

const prog = "sweep-state"

// Main runs the command line and returns the exit status: 0 for every
// operational outcome (ERROR included), 2 for misuse, 1 when stdout could
// not take the answer. It never exits, and a
// panic (a defect) becomes the contract's ERROR: one line on stderr, no
// stack trace, exit 0.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	return MainContext(context.Background(), args, stdout, stderr)
}

// MainContext is Main whose subcommands that decide on the state file run
// with ctx (sweepstate's Engine.RunContext): the tests that hold the fast
// paths to the general one give it sweepfast's option.
func MainContext(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if recover() != nil {
			io.WriteString(stdout, string(sweepcore.WordError)+"\n")
			fmt.Fprintf(stderr, "%s: error: internal error\n", prog)
			code = 0
		}
	}()
	cl, err := parseCommandLine(args)
	if err != nil {
		return usage(stderr, cl.sub, err)
	}
	if cl.version {
		_, err := io.WriteString(stdout, prog+" "+version.String()+"\n")
		return answered(err, stderr)
	}
	if cl.help {
		text := topHelp()
		if cl.sub != nil {
			text = subHelp(cl.sub)
		}
		_, err := io.WriteString(stdout, text)
		return answered(err, stderr)
	}
	if err := checkUTF8(cl.sub, cl.values); err != nil {
		return usage(stderr, cl.sub, err)
	}
	if now, ok := cl.values["--now"]; ok && stampsTheLease[cl.sub.name] {
		// After the argparse rules and the UTF-8 one: a divergence
		// (D14) the reference's argparse does not know.
		if err := sweeprules.CheckNow(now); err != nil {
			return usage(stderr, cl.sub, misuse("argument --now: %v", err))
		}
	}
	if a, ok := actings[cl.sub.name]; ok {
		if a.check != nil {
			if err := a.check(cl.values); err != nil {
				return usage(stderr, cl.sub, err)
			}
		}
		return a.act(cl.values, stdout, stderr)
	}
	return run(ctx, cl.sub.build(cl.values), cl.values["--state"], stdout, stderr)
}

// checkUTF8 refuses an option value that is not valid UTF-8 as misuse. The
// decision would see the raw bytes while the file writer stores U+FFFD for
// them, so a writer would lock itself out of its own lease and two distinct
// ids could become one key. The message names the option, never the value.
func checkUTF8(sub *subcommand, values map[string]string) error {
	names := sub.spec.positionals
	for _, o := range sub.spec.options {
		names = append(names, o.name)
	}
	for _, name := range names {
		if v, ok := values[name]; ok {
			if err := sweeprules.CheckText(v); err != nil {
				return misuse("argument %s: %v", name, err)
			}
		}
	}
	return nil
}

// commandLine is a parsed argv: help for sub (nil: the top level), or the
// option values of sub.
type commandLine struct {
	sub     *subcommand
	help    bool
	version bool
	values  map[string]string
}

// parseCommandLine applies the top-level parser, then the subcommand's.
// argparse's own errors are misuse with argparse's message (option names
// only); the end-of-parse checks keep this command line's words, which
// count leftover words instead of echoing them.
func parseCommandLine(args []string) (commandLine, error) {
	top, err := topParser.Parse(args)
	if err != nil {
		return commandLine{}, err
	}
	switch {
	case top.Help:
		return commandLine{help: true}, nil
	case top.Version:
		return commandLine{version: true}, nil
	case top.Command == "":
		return commandLine{}, misuse("the following arguments are required: command")
	case top.Command == "--":
		return commandLine{}, misuse("argument command: invalid choice")
	}
	var sub *subcommand
	for k := range commands {
		if commands[k].name == top.Command {
			sub = &commands[k]
		}
	}
	if sub == nil {
		return commandLine{}, misuse("argument command: invalid choice (choose from %s)", commandNames())
	}
	p, err := sub.spec.parser().Parse(top.Rest)
	if err != nil {
		return commandLine{sub: sub}, err
	}
	if p.Help {
		return commandLine{sub: sub, help: true}, nil
	}
	if len(p.Missing) > 0 {
		return commandLine{sub: sub}, misuse("the following arguments are required: %s", strings.Join(p.Missing, ", "))
	}
	if len(p.Extras) > 0 {
		return commandLine{sub: sub}, misuse("unrecognized arguments (%d)", len(p.Extras))
	}
	if len(top.Extras) > 0 {
		return commandLine{}, misuse("unrecognized arguments (%d)", len(top.Extras))
	}
	for name := range p.Flags {
		p.Values[name] = "true"
	}
	return commandLine{sub: sub, values: p.Values}, nil
}

func run(ctx context.Context, cmd sweepcore.Command, state string, stdout, stderr io.Writer) int {
	if _, isRead := cmd.(sweepcore.Read); isRead {
		// read's payload is the whole document: from a file this engine
		// wrote it comes as text, transcoded without building the tree.
		res, text := sweepcore.ReadText(state)
		return answerCore(res, text, stdout, stderr)
	}
	return answerCore(sweepcore.Run(ctx, Clock, state, cmd), nil, stdout, stderr)
}

// answerCore prints the engine's answer res (and read's payload text) and
// returns the exit status.
func answerCore(res sweepcore.Result, text *outtext.Text, stdout, stderr io.Writer) int {
	var payload io.WriterTo
	if res.Payload != nil {
		payload = documentPayload{res.Payload}
	}
	return answer(res.Word, res.Reason, payload, text, stdout, stderr)
}

// documentPayload writes a payload document as its line holds it.
type documentPayload struct{ doc *value.Map }

func (p documentPayload) WriteTo(w io.Writer) (int64, error) { return 0, pyjson.EncodeTo(w, p.doc) }

// answer prints the word, the payload's line (payload, or read's payload
// text) and ERROR's reason, and returns the exit status.
func answer(word sweepcore.Word, reason string, payload io.WriterTo, text *outtext.Text, stdout, stderr io.Writer) int {
	// Streamed: EncodeTo writes large chunks, which the small buffer
	// passes through uncopied. A text the buffer holds goes out with the
	// word in one write; a larger one goes to stdout itself, after the
	// word, where a pipe takes it by reference (outtext.Text.WriteTo).
	out := bufio.NewWriter(stdout)
	out.WriteString(string(word) + "\n")
	var err error
	switch {
	case text.Len() > 0:
		to := io.Writer(out)
		if text.Len() >= out.Available() {
			err = out.Flush()
			to = stdout
		}
		// Nothing more once stdout refused a write, as the buffer's
		// sticky error has it on the other path.
		if err == nil {
			if _, err = text.WriteTo(to); err == nil {
				out.WriteByte('\n')
			}
		}
	case payload != nil:
		payload.WriteTo(out)
		out.WriteByte('\n')
	}
	if err == nil {
		err = out.Flush()
	}
	if word == sweepcore.WordError {
		fmt.Fprintf(stderr, "%s: error: %s\n", prog, reason)
	}
	if word == sweepcore.WordCorrupt && os.Getenv(ExplainEnv) == "1" {
		fmt.Fprintf(stderr, "%s: %s: %s\n", prog, word, reason)
	}
	return answered(err, stderr)
}

// runMetrics answers metrics: the word, then (OK, no --to) the
// exposition text. With --to the text replaces that file instead and only
// the word is printed; an answer other than OK leaves the file saying
// sweep_state_up 0, and a file that cannot be written is ERROR.
func runMetrics(v map[string]string, stdout, stderr io.Writer) int {
	to := v["--to"]
	res := sweepcore.Run(context.Background(), Clock, v["--state"], sweepcore.Metrics{Now: v["--now"]})
	var text string
	if res.Word == sweepcore.WordOK && res.Metrics != nil {
		text = metricsText(res.Metrics)
	}
	if to != "" {
		fileText := text
		if fileText == "" {
			fileText = metricsDown
		}
		if err := writeMetricsFile(to, fileText); err != nil {
			res = sweepcore.Result{Word: sweepcore.WordError, Reason: "cannot write the metrics file"}
		}
		text = ""
	}
	_, err := io.WriteString(stdout, string(res.Word)+"\n"+text)
	if res.Word == sweepcore.WordError {
		fmt.Fprintf(stderr, "%s: error: %s\n", prog, res.Reason)
	}
	if res.Word == sweepcore.WordCorrupt && os.Getenv(ExplainEnv) == "1" {
		fmt.Fprintf(stderr, "%s: %s: %s\n", prog, res.Word, res.Reason)
	}
	return answered(err, stderr)
}

// answered is the exit status once stdout was written: 0, or 1 when the
// answer could not be written (a full disk, a closed pipe). The call may
// have taken effect, but a caller must never see exit 0 without its status
// word (the reference exits 1 there too).
func answered(writeErr error, stderr io.Writer) int {
	if writeErr == nil {
		return 0
	}
	fmt.Fprintf(stderr, "%s: error: the answer could not be written to stdout\n", prog)
	return 1
}

func usage(stderr io.Writer, sub *subcommand, err error) int {
	fmt.Fprint(stderr, usageLine(sub))
	name := prog
	if sub != nil {
		name += " " + sub.name
	}
	fmt.Fprintf(stderr, "%s: error: %v\n", name, err)
	return 2
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func usageLine(sub *subcommand) string {
	if sub == nil {
		return "usage: " + prog + " [-h] [--version] {" + strings.ReplaceAll(commandNames(), ", ", ",") + "} ...\n"
	}
	var b strings.Builder
	b.WriteString("usage: " + prog + " " + sub.name + " [-h]")
	if a := actings[sub.name]; a.usage != "" {
		b.WriteString(a.usage + "\n")
		return b.String()
	}
	for _, o := range sub.spec.options {
		if o.required {
			fmt.Fprintf(&b, " %s %s", o.name, o.metavar)
		} else {
			fmt.Fprintf(&b, " [%s %s]", o.name, o.metavar)
		}
	}
	b.WriteString("\n")
	return b.String()
}

func topHelp() string {
	var b strings.Builder
	b.WriteString(usageLine(nil))
	b.WriteString("\nThe only writer of a sweep's YAML state file. Line 1 of stdout is a status\n")
	b.WriteString("word (OK, NO-STATE, CORRUPT, LOCKED, STALE-RECLAIMED, LEASE-LOST, REFUSED,\n")
	b.WriteString("ERROR); line 2, when present, is a JSON payload. Misuse exits 2.\n\n")
	b.WriteString("options:\n  -h, --help            show this help message and exit\n")
	b.WriteString("  --version             show program's version number and exit\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-16s %s\n", c.name, c.summary)
	}
	b.WriteString("\nRun '" + prog + " COMMAND -h' for a command's options.\n")
	return b.String()
}

func subHelp(sub *subcommand) string {
	var b strings.Builder
	b.WriteString(usageLine(sub))
	b.WriteString("\n" + sub.summary + "\n\n")
	if lines := actings[sub.name].positionalHelp; len(lines) > 0 {
		b.WriteString("positional arguments:\n")
		for _, line := range lines {
			b.WriteString("  " + line + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("options:\n  -h, --help            show this help message and exit\n")
	for _, o := range sub.spec.options {
		fmt.Fprintf(&b, "  %-21s %s\n", strings.TrimSpace(o.name+" "+o.metavar), o.help)
	}
	return b.String()
}

// stampsTheLease names the subcommands whose --now stamps the lease, and
// so must be a time the staleness check reads (D14).
var stampsTheLease = map[string]bool{"lease-acquire": true, "upsert-item": true, "cursor-advance": true}
