package ledgercli

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/stateguard/stateguard/internal/testsupport/ledgerrows"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// json.Marshal of a ledger.Task gives exactly the task the CLI prints:
// the same keys in the same order, the same float text, has_payload_hash
// and never the fingerprint. (Before Task had MarshalJSON, json.Marshal
// wrote Go field names and the payload hash itself.) The tasks cover
// every column: a parent, a payload hash, timeouts of several float
// forms, a started, closed and delivered task, codes and NULLs.
func TestTaskMarshalJSONIsWhatTheCLIPrints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tasks.sqlite")
	env := pinnedEnv("978307200.5")
	const hash = "aaaa000000000000000000000000000000000000000000000000000000000bbb"
	parent := "7a5c0001-0000-4000-8000-000000000001"
	child := "7a5c0002-0000-4000-8000-000000000002"
	internalID := "7a5c0003-0000-4000-8000-000000000003"
	steps := [][]string{
		{"create", "--task-id", parent, "--timeout-seconds", "1e16"},
		{"create", "--task-id", child, "--parent-id", parent, "--payload-sha256", hash, "--timeout-seconds", "0.1"},
		{"create", "--task-id", internalID, "--internal"},
		{"start", parent},
		{"close", parent, "--status", "succeeded", "--code", "completed"},
		{"delivery", parent, "--status", "delivered", "--code", "transport_acknowledged"},
		{"close", internalID, "--status", "cancelled"},
	}
	for _, s := range steps {
		var out bytes.Buffer
		if rc := run(platformtest.ACLArgs(append([]string{"--db", db}, s...)...), &out, env); rc != 0 {
			t.Fatalf("%v: exit %d %s", s, rc, out.String())
		}
	}
	l, err := ledger.Open(db, ledger.Options{ReadOnly: true, AllowExternalACL: platformtest.Windows})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, id := range []string{parent, child, internalID} {
		var out bytes.Buffer
		if rc := run(platformtest.ACLArgs("--db", db, "get", id), &out, env); rc != 0 {
			t.Fatalf("get: exit %d %s", rc, out.String())
		}
		task, err := l.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"ok":true,"task":` + string(got) + "}\n"; out.String() != want {
			t.Errorf("CLI printed %s\njson.Marshal %s", out.String(), got)
		}
		if strings.Contains(string(got), hash) || strings.Contains(string(got), "PayloadHash") {
			t.Errorf("json.Marshal shows the payload hash: %s", got)
		}
	}
}

// json.Marshal of the Go API's BackupReport is the "backup" object the
// CLI prints for the same backup, byte for byte: a backup by the CLI and
// one by the API of the same ledger print the same line.
func TestBackupReportMarshalJSONIsWhatTheCLIPrints(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "tasks.sqlite")
	env := pinnedEnv("978307200")
	for _, s := range [][]string{{"create"}, {"create", "--internal"}} {
		var out bytes.Buffer
		if rc := run(platformtest.ACLArgs(append([]string{"--db", db}, s...)...), &out, env); rc != 0 {
			t.Fatalf("%v: exit %d %s", s, rc, out.String())
		}
	}
	var out bytes.Buffer
	if rc := run(platformtest.ACLArgs("--db", db, "backup", "--to", filepath.Join(dir, "cli.sqlite")), &out, env); rc != 0 {
		t.Fatalf("backup: exit %d %s", rc, out.String())
	}
	l, err := ledger.Open(db, ledger.Options{ReadOnly: true, AllowExternalACL: platformtest.Windows})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	rep, err := l.Backup(filepath.Join(dir, "api.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"backup":` + string(got) + `,"ok":true}` + "\n"; out.String() != want || rep.TaskCount != 2 || rep.EventCount != 2 || rep.Bytes == 0 {
		t.Fatalf("the CLI printed %s; the API's report %+v marshals as %s", out.String(), rep, got)
	}
}

// json.Marshal of each report the Go API returns is what the CLI prints
// for the same call on the same ledger at the same time, byte for byte:
// init's storage, doctor, reconcile's and prune's reports (dry runs, so
// both see the same ledger), and list's pages (the CLI adds "ok").
func TestReportsMarshalAsTheCLIPrints(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tasks.sqlite")
	const now = 978307200.0
	env := pinnedEnv("978307200")
	cli := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if rc := run(platformtest.ACLArgs(append([]string{"--db", db}, args...)...), &out, env); rc != 0 {
			t.Fatalf("%v: exit %d %s", args, rc, out.String())
		}
		return out.String()
	}
	parent := "7a5c0001-0000-4000-8000-000000000001"
	for _, s := range [][]string{
		{"init"},
		{"create", "--task-id", parent},
		{"create", "--parent-id", parent, "--task-id", "7a5c0002-0000-4000-8000-000000000002"},
		{"create", "--internal", "--task-id", "7a5c0003-0000-4000-8000-000000000003"},
		{"start", parent},
		{"close", "7a5c0003-0000-4000-8000-000000000003", "--status", "cancelled"},
	} {
		cli(s...)
	}
	l, err := ledger.Open(db, ledgerrows.WithClockSeconds(ledger.Options{AllowExternalACL: platformtest.Windows}, func() float64 { return now }))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	marshal := func(v any, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(js)
	}
	doctor, err := l.Doctor()
	reconcile, rerr := ledgerrows.ReconcileSeconds(context.Background(), l, 0, 0, true)
	prune, perr := l.Prune(ledgerrows.PruneSeconds(now+1, true))
	first, ferr := l.List(ledger.ListFilter{Limit: 2})
	last, lerr := l.List(ledger.ListFilter{After: first.Next})
	for _, c := range []struct{ name, cli, api string }{
		{"init", cli("init"), `{"ok":true,"storage":` + marshal(l.StorageInfo(), nil) + "}\n"},
		{"doctor", cli("doctor"), marshal(doctor, err) + "\n"},
		{"reconcile", cli("reconcile", "--dry-run", "--active-grace-seconds", "0", "--delivery-grace-seconds", "0"), `{"ok":true,"reconcile":` + marshal(reconcile, rerr) + "}\n"},
		{"prune", cli("prune", "--dry-run", "--ended-before", "978307201"), `{"ok":true,"prune":` + marshal(prune, perr) + "}\n"},
		{"list page", cli("list", "--limit", "2"), strings.Replace(marshal(first, ferr), `,"tasks":`, `,"ok":true,"tasks":`, 1) + "\n"},
		{"last list page", cli("list", "--after", first.Next), strings.Replace(marshal(last, lerr), `,"tasks":`, `,"ok":true,"tasks":`, 1) + "\n"},
	} {
		if c.cli != c.api {
			t.Errorf("%s: the CLI printed\n%s\njson.Marshal of the API's report\n%s", c.name, c.cli, c.api)
		}
	}
	if first.Next == "" || last.Next != "" || len(last.Tasks) != 1 {
		t.Fatalf("pages of 2 and 1 expected: %q %q %d", first.Next, last.Next, len(last.Tasks))
	}
}

func ptr[T any](v T) *T { return &v }
