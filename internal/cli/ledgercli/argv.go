package ledgercli

import (
	"errors"

	"github.com/stateguard/stateguard/internal/cli/argparse"
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

// parseArgv runs one parser the way argparse does and gives argparse's
// immediate errors their fixed reasons.
func parseArgv(p *argparse.Parser, args []string) (*argparse.Result, error) {
	res, err := p.Parse(args)
	var perr *argparse.Error
	if errors.As(err, &perr) {
		switch perr.Kind {
		case argparse.Ambiguous:
			return nil, errAmbiguousOption
		case argparse.ExplicitArgument:
			return nil, errFlagWithValue
		case argparse.ExpectedOne:
			return nil, errMissingValue
		case argparse.InvalidValue:
			return nil, errBadNumber
		default:
			return nil, errBadChoice
		}
	}
	return res, err
}

// checkComplete applies argparse's end-of-parse checks: required options
// and positionals present, nothing unrecognised left over.
func checkComplete(res *argparse.Result) error {
	if len(res.Missing) > 0 {
		return errMissingRequired
	}
	if len(res.Extras) > 0 {
		return errUnrecognized
	}
	return nil
}

// errNotNumber is what a number option's type check answers; the reason
// the CLI shows is errBadNumber's.
var errNotNumber = errors.New("not a number")

// numberType turns a grammar check into argparse's type= conversion.
func numberType(looksLike func(string) bool) func(string) error {
	return func(s string) error {
		if !looksLike(s) {
			return errNotNumber
		}
		return nil
	}
}
