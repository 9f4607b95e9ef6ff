package ledger

import (
	"testing"

	"github.com/stateguard/stateguard/impl/ledger/internal/storageguard"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// TestPathTextRulesOnEachPlatform pins spec/task-state-guard.md 11.1 for
// both readings of a path: on Windows a final name ending in ":" (a drive's
// current directory, as in "C:" or "C:\") names no file and "//host/share"
// is a UNC path; elsewhere both are ordinary names. A backslash UNC path is
// refused everywhere, and trailing separators are dropped. Broken on
// purpose by removing the GOOS test of the trailing-colon rule (the POSIX
// rows fail) and by dropping the "//" UNC case (the Windows rows fail).
func TestPathTextRulesOnEachPlatform(t *testing.T) {
	const (
		noFile = "database path names no file"
		unc    = "UNC paths are not supported"
	)
	type want struct{ path, reason string }
	cases := []struct {
		in             string
		posix, windows want
	}{
		{"C:", want{"C:", ""}, want{"", noFile}},
		{`C:\`, want{`C:\`, ""}, want{"", noFile}},
		{"C:/", want{"C:", ""}, want{"", noFile}},
		{"d/tasks:", want{"d/tasks:", ""}, want{"", noFile}},
		{`C:\ledgers\tasks.sqlite`, want{`C:\ledgers\tasks.sqlite`, ""}, want{`C:\ledgers\tasks.sqlite`, ""}},
		{`C:\ledgers\tasks.sqlite\`, want{`C:\ledgers\tasks.sqlite\`, ""}, want{`C:\ledgers\tasks.sqlite`, ""}},
		{"C:/ledgers/tasks.sqlite/", want{"C:/ledgers/tasks.sqlite", ""}, want{"C:/ledgers/tasks.sqlite", ""}},
		{`C:tasks.sqlite`, want{`C:tasks.sqlite`, ""}, want{`C:tasks.sqlite`, ""}},
		{`\\server\share\tasks.sqlite`, want{"", unc}, want{"", unc}},
		{"//server/share/tasks.sqlite", want{"//server/share/tasks.sqlite", ""}, want{"", unc}},
	}
	for _, c := range cases {
		w := c.posix
		if platformtest.Windows {
			w = c.windows
		}
		got, err := storageguard.CheckPathText(c.in)
		if w.reason != "" {
			if err == nil || Reason(err) != w.reason {
				t.Errorf("%q: got %q, %v; want the refusal %q", c.in, got, err, w.reason)
			}
			continue
		}
		if err != nil || got != w.path {
			t.Errorf("%q: got %q, %v; want %q", c.in, got, err, w.path)
		}
	}
}
