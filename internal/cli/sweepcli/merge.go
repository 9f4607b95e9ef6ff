package sweepcli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/engine/sweepcore"
)

// errPublished is --published other than the two sides.
var errPublished = errors.New("invalid choice (choose from ours, theirs)")

func publishedOption() optionSpec {
	o := req("--published", "SIDE", "the side already published: ours or theirs")
	o.convert = func(s string) error {
		if _, ok := sweepstate.ParsePublished(s); !ok {
			return errPublished
		}
		return nil
	}
	return o
}

// runMerge is `merge`: exit 0 for every word, as every subcommand.
func runMerge(v map[string]string, stdout, stderr io.Writer) int {
	published, _ := sweepstate.ParsePublished(v["--published"]) // checked by the parse
	eng := sweepstate.Engine{Clock: Clock}
	res := eng.Merge(v["--base"], v["--ours"], v["--theirs"], published)
	return answerMerge(res, stdout, stderr)
}

// answerMerge prints the Go API's answer to a merge as answer prints the
// engine's.
func answerMerge(res sweepstate.Result, stdout, stderr io.Writer) int {
	var payload io.WriterTo
	if !res.Payload.IsZero() {
		payload = res.Payload
	}
	return answer(sweepcore.Word(res.Word), res.Reason, payload, nil, stdout, stderr)
}

// Driver names what --install writes into the repository's configuration
// (spec 21.5).
const (
	driverName    = "sweep-state three-way merge of sweep state files"
	driverCommand = "sweep-state merge-driver %O %A %B %P"
)

// checkDriverArgs: --install alone, or three or four paths without it.
func checkDriverArgs(v map[string]string) error {
	_, install := v["--install"]
	_, hasBase := v["O"]
	_, hasTheirs := v["B"]
	switch {
	case install && hasBase:
		return misuse("argument --install: not allowed with O A B")
	case !install && !hasTheirs:
		return misuse("the following arguments are required: O, A, B (or --install)")
	}
	return nil
}

// runMergeDriver is `merge-driver`: --install configures git; otherwise it
// merges as git's driver, exiting 1 (the path stays conflicted) on any
// word but OK.
func runMergeDriver(v map[string]string, stdout, stderr io.Writer) int {
	if _, install := v["--install"]; install {
		for _, kv := range [][2]string{{"merge.sweep-state.name", driverName}, {"merge.sweep-state.driver", driverCommand}} {
			if _, err := git("config", "--local", kv[0], kv[1]); err != nil {
				return answer(sweepcore.WordError, "cannot configure git's merge driver", nil, nil, stdout, stderr)
			}
		}
		return answer(sweepcore.WordOK, "", nil, nil, stdout, stderr)
	}
	published, ok := publishedSide()
	var res sweepstate.Result
	if !ok {
		res = sweepstate.Result{Word: sweepstate.WordError, Reason: "cannot tell a rebase from a merge"}
	} else {
		eng := sweepstate.Engine{Clock: Clock}
		// %A is git's own temporary file: a lock file beside it would
		// stay in the working tree.
		res = eng.MergeUnlocked(v["O"], v["A"], v["B"], published)
	}
	if code := answerMerge(res, stdout, stderr); code != 0 || res.Word != sweepstate.WordOK {
		return 1
	}
	return 0
}

// publishedSide asks git whether a rebase is under way: then ours (%A,
// HEAD, the upstream rebased onto) is published; else, in a merge, theirs
// (%B, the fetched branch) is.
func publishedSide() (sweepstate.Published, bool) {
	for _, state := range []string{"rebase-merge", "rebase-apply"} {
		out, err := git("rev-parse", "--git-path", state)
		if err != nil {
			return 0, false
		}
		if _, err := os.Stat(strings.TrimRight(string(out), "\r\n")); err == nil {
			return sweepstate.PublishedOurs, true
		}
	}
	return sweepstate.PublishedTheirs, true
}

// git runs the machine's git in the current directory (git runs a driver
// at the top of the working tree).
func git(args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.Command("git", args...)
	cmd.Stdout = &out
	err := cmd.Run()
	return out.Bytes(), err
}
