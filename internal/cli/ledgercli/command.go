package ledgercli

import (
	"fmt"
	"strconv"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/cli/argparse"
)

// invocation is a fully validated command line. Building it touches no
// file (divergence L1): a command line refused here leaves the disk as it
// was.
type invocation struct {
	db               string
	allowExternalACL bool
	command          string

	taskID      string // canonical; also the positional of start etc.
	parentID    string // canonical or ""
	payloadHash string
	timeout     *float64
	internal    bool

	status string
	// code is nil when --code is absent. A given value, even an empty
	// one, is checked by the ledger (see buildInvocation): an empty code
	// is a malformed code, not a missing one.
	code *string

	activeGrace   float64
	deliveryGrace float64
	dryRun        bool

	list ledger.ListFilter // list's filters, position and page size

	backupTo    string // backup's new file
	restoreFrom string // restore's backup

	metricsTo string // metrics' --to: the textfile replaced, or "" for stdout

	pruneBefore float64 // prune's --ended-before
}

// readOnly reports whether the command must open the ledger read-only:
// doctor (L2/L5: never creates, migrates or re-permissions), the dry run,
// and the two read commands, which have no reason to create a file.
func (inv *invocation) readOnly() bool {
	switch inv.command {
	case "doctor", "get", "children", "history", "list", "backup", "metrics":
		return true
	case "reconcile", "prune":
		return inv.dryRun
	}
	return false
}

// mustExist reports whether the command refuses a missing database instead
// of creating it: only init and create start a ledger (divergence L7 for
// reconcile; the read-only commands never create anything anyway).
func (inv *invocation) mustExist() bool {
	return inv.command != "init" && inv.command != "create" && inv.command != "restore"
}

// needsExistingTask reports whether the command can only succeed on a
// task that is already stored: the writes that address a task, and a
// create under a parent. On a missing database file these answer
// TaskNotFound and create nothing (divergence L1).
func (inv *invocation) needsExistingTask() bool {
	switch inv.command {
	case "start", "heartbeat", "close", "delivery":
		return true
	case "create":
		return inv.parentID != ""
	}
	return false
}

// topParser is the reference's top-level parser; the subcommand's name
// and the words after it go to one of subParsers.
var topParser = argparse.Parser{
	Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--version"}, Key: "version", Kind: argparse.Version},
		{Names: []string{"--db"}, Key: "db", Required: true},
		{Names: []string{"--allow-external-acl"}, Key: "allow-external-acl", Kind: argparse.Flag},
	},
	Subcommand: true,
}

// Number options are checked when read, by float()'s or int()'s grammar.
var (
	floatType = numberType(looksLikePythonFloat)
	intType   = numberType(looksLikeInt)
)

func taskIDParser() *argparse.Parser {
	return &argparse.Parser{Options: []argparse.Option{argparse.HelpOption}, Positionals: []string{"task_id"}}
}

func transitionParser(choices []string) *argparse.Parser {
	return &argparse.Parser{
		Options: []argparse.Option{
			argparse.HelpOption,
			{Names: []string{"--status"}, Key: "status", Choices: choices, Required: true},
			{Names: []string{"--code"}, Key: "code"},
		},
		Positionals: []string{"task_id"},
	}
}

func noArgParser() *argparse.Parser {
	return &argparse.Parser{Options: []argparse.Option{argparse.HelpOption}}
}

// subParsers holds each subcommand's parser, by name.
var subParsers = map[string]*argparse.Parser{
	"init": noArgParser(),
	"create": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--task-id"}, Key: "task-id"},
		{Names: []string{"--parent-id"}, Key: "parent-id"},
		{Names: []string{"--payload-sha256"}, Key: "payload-sha256"},
		{Names: []string{"--timeout-seconds"}, Key: "timeout-seconds", Type: floatType},
		{Names: []string{"--internal"}, Key: "internal", Kind: argparse.Flag},
	}},
	"start":     taskIDParser(),
	"heartbeat": taskIDParser(),
	"get":       taskIDParser(),
	"children":  taskIDParser(),
	"history":   taskIDParser(),
	"close": transitionParser([]string{
		string(ledger.StatusSucceeded), string(ledger.StatusFailed),
		string(ledger.StatusTimedOut), string(ledger.StatusCancelled),
	}),
	"delivery": transitionParser([]string{
		string(ledger.DeliveryDelivered), string(ledger.DeliveryFailed), string(ledger.DeliveryNotApplicable),
	}),
	"reconcile": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--active-grace-seconds"}, Key: "active-grace-seconds", Type: floatType},
		{Names: []string{"--delivery-grace-seconds"}, Key: "delivery-grace-seconds", Type: floatType},
		{Names: []string{"--dry-run"}, Key: "dry-run", Kind: argparse.Flag},
	}},
	"doctor": noArgParser(),
	"backup": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--to"}, Key: "to", Required: true},
	}},
	"metrics": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--active-grace-seconds"}, Key: "active-grace-seconds", Type: floatType},
		{Names: []string{"--delivery-grace-seconds"}, Key: "delivery-grace-seconds", Type: floatType},
		{Names: []string{"--to"}, Key: "to"},
	}},
	"restore": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--from"}, Key: "from", Required: true},
	}},
	"prune": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--ended-before"}, Key: "ended-before", Type: floatType, Required: true},
		{Names: []string{"--dry-run"}, Key: "dry-run", Kind: argparse.Flag},
	}},
	"list": {Options: []argparse.Option{
		argparse.HelpOption,
		{Names: []string{"--status"}, Key: "status", Kind: argparse.Append, Choices: taskStateWords},
		{Names: []string{"--delivery"}, Key: "delivery", Kind: argparse.Append, Choices: deliveryStateWords},
		{Names: []string{"--updated-before"}, Key: "updated-before", Type: floatType},
		{Names: []string{"--ended-before"}, Key: "ended-before", Type: floatType},
		{Names: []string{"--parent-id"}, Key: "parent-id"},
		{Names: []string{"--after"}, Key: "after"},
		{Names: []string{"--limit"}, Key: "limit", Type: intType},
	}},
}

// The words list's --status and --delivery choose from, in the
// doctor's order.
var (
	taskStateWords     = stateWords(taskStates)
	deliveryStateWords = stateWords(deliveryStates)
)

func stateWords[S ~string](states []S) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}

func subcommandHelp(name string) string {
	switch name {
	case "create":
		return createHelp
	case "close":
		return closeHelp
	case "delivery":
		return deliveryHelp
	case "reconcile":
		return reconcileHelp
	case "list":
		return listHelp
	case "backup":
		return backupHelp
	case "metrics":
		return metricsHelp
	case "restore":
		return restoreHelp
	case "prune":
		return pruneHelp
	case "init", "doctor":
		return fmt.Sprintf(noArgHelpTemplate, name)
	default:
		return fmt.Sprintf(taskIDHelpTemplate, name)
	}
}

// parseCommandLine returns either a validated invocation, or the text of
// --help/--version, or an error (always InvalidInput).
func parseCommandLine(args []string) (*invocation, string, error) {
	top, sub, text, err := readArgv(args)
	if err != nil || text != "" {
		return nil, text, err
	}
	inv, err := buildInvocation(top, sub)
	return inv, "", err
}

// readArgv reads args by argparse's rules: the top-level parser, then the
// subcommand's. It returns both parsers' results, or the text of
// --help/--version, or an error (always InvalidInput). No value is judged
// here beyond its option's type and choices.
func readArgv(args []string) (top, sub *argparse.Result, text string, err error) {
	top, err = parseArgv(&topParser, args)
	if err != nil {
		return nil, nil, "", err
	}
	switch {
	case top.Help:
		return nil, nil, topHelp, nil
	case top.Version:
		return nil, nil, versionText(), nil
	case top.Command == "":
		return nil, nil, "", errNoCommand
	}
	spec, ok := subParsers[top.Command]
	if !ok {
		return nil, nil, "", errUnknownCommand
	}
	sub, err = parseArgv(spec, top.Rest)
	if err != nil {
		return nil, nil, "", err
	}
	if sub.Help {
		// argparse runs the subcommand (and its help) before it checks the
		// top level's required --db.
		return nil, nil, subcommandHelp(top.Command), nil
	}
	if err := checkComplete(sub); err != nil {
		return nil, nil, "", err
	}
	if err := checkComplete(top); err != nil {
		return nil, nil, "", err
	}
	return top, sub, "", nil
}

// looksLikePythonFloat approximates float()'s grammar (ASCII only), with
// the special words; range and sign are judged later.
func looksLikePythonFloat(s string) bool {
	t := trimASCIISpace(s)
	if isPlainDecimal(t) {
		return true
	}
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	switch lower(t) {
	case "nan", "inf", "infinity":
		return true
	}
	return false
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// buildInvocation validates every value before any file is touched. The
// reason code is the exception: it is handed to the ledger unchecked
// because the reference returns an identical terminal repeat before it
// looks at the code (contract, "order of checks").
func buildInvocation(top, sub *argparse.Result) (*invocation, error) {
	inv := &invocation{
		db:               top.Values["db"],
		allowExternalACL: top.Flags["allow-external-acl"],
		command:          top.Command,
		status:           sub.Values["status"],
		internal:         sub.Flags["internal"],
		dryRun:           sub.Flags["dry-run"],
		activeGrace:      600,
		deliveryGrace:    600,
	}
	// The path's text is judged here, with the other values, by the
	// ledger's own rule; the disk is looked at only later. A server's URL
	// is read by the driver when the ledger opens; only a password in it
	// is refused here, before anything connects.
	if isServerURL(inv.db) {
		if urlHoldsPassword(inv.db) {
			return nil, errURLPassword
		}
	} else if err := ledger.CheckPath(inv.db); err != nil {
		return nil, err
	}
	if text, ok := sub.Values["code"]; ok {
		inv.code = &text
	}
	canonicalID := ledger.ParseTaskID
	var err error
	if text, ok := sub.Values["task_id"]; ok {
		if inv.taskID, err = canonicalID(text); err != nil {
			return nil, err
		}
	}
	if text, ok := sub.Values["task-id"]; ok {
		if inv.taskID, err = canonicalID(text); err != nil {
			return nil, err
		}
	}
	if text, ok := sub.Values["parent-id"]; ok {
		if inv.parentID, err = canonicalID(text); err != nil {
			return nil, err
		}
	}
	if text, ok := sub.Values["payload-sha256"]; ok {
		if !ledger.ValidPayloadHash(text) {
			return nil, errBadPayloadHash
		}
		inv.payloadHash = text
	}
	seconds := func(key string, dst *float64) error {
		text, ok := sub.Values[key]
		if !ok {
			return nil
		}
		v, ok := parseSeconds(text)
		if !ok {
			return errBadSeconds
		}
		*dst = v
		return nil
	}
	if _, ok := sub.Values["timeout-seconds"]; ok {
		inv.timeout = new(float64)
		if err := seconds("timeout-seconds", inv.timeout); err != nil {
			return nil, err
		}
	}
	if err := seconds("active-grace-seconds", &inv.activeGrace); err != nil {
		return nil, err
	}
	if err := seconds("delivery-grace-seconds", &inv.deliveryGrace); err != nil {
		return nil, err
	}
	if text, ok := sub.Values["to"]; ok {
		if err := ledger.CheckPath(text); err != nil {
			return nil, err
		}
		inv.backupTo = text
	}
	if inv.command == "metrics" {
		inv.metricsTo, inv.backupTo = inv.backupTo, ""
	}
	if text, ok := sub.Values["from"]; ok {
		if err := ledger.CheckPath(text); err != nil {
			return nil, err
		}
		inv.restoreFrom = text
	}
	if inv.command == "prune" {
		if err := seconds("ended-before", &inv.pruneBefore); err != nil {
			return nil, err
		}
	}
	if inv.command == "list" {
		if err := buildList(inv, sub, seconds); err != nil {
			return nil, err
		}
	}
	return inv, nil
}

// buildList validates list's options. --parent-id was read into
// inv.parentID above; its status choices were checked by the parser.
func buildList(inv *invocation, sub *argparse.Result, seconds func(string, *float64) error) error {
	f := &inv.list
	f.ParentID = inv.parentID
	inv.parentID = ""
	for _, s := range sub.Lists["status"] {
		f.Statuses = append(f.Statuses, ledger.Status(s))
	}
	for _, s := range sub.Lists["delivery"] {
		f.Deliveries = append(f.Deliveries, ledger.DeliveryStatus(s))
	}
	// The reference's seconds, which no Time may hold.
	for _, b := range []struct {
		key string
		set func(float64)
	}{{"updated-before", f.SetUpdatedBeforeSeconds}, {"ended-before", f.SetEndedBeforeSeconds}} {
		if _, ok := sub.Values[b.key]; ok {
			var v float64
			if err := seconds(b.key, &v); err != nil {
				return err
			}
			b.set(v)
		}
	}
	if text, ok := sub.Values["after"]; ok {
		id, err := ledger.ParseTaskID(text)
		if err != nil {
			return err
		}
		f.After = id
	}
	f.Limit = ledger.ListDefaultLimit
	if text, ok := sub.Values["limit"]; ok {
		n, err := strconv.Atoi(trimASCIISpace(text))
		if err != nil || n < 1 || n > ledger.ListMaxLimit {
			return errBadLimit
		}
		f.Limit = n
	}
	return nil
}

// looksLikeInt approximates int()'s grammar for ASCII text: optional
// surrounding whitespace, an optional sign, digits; the range is judged
// later.
func looksLikeInt(s string) bool {
	t := trimASCIISpace(s)
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		t = t[1:]
	}
	if t == "" {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}
