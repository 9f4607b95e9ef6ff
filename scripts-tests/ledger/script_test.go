// Package ledger_test runs the task-state-guard script tests: every file in
// testdata/ is a txtar archive whose script drives the real CLI and pins
// its output with `cmp stdout want.json`. Read them to learn the CLI.
//
// Run with -update to rewrite the golden files after an intended change.
package ledger_test

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"

	"github.com/stateguard/stateguard/impl/ledger/postgres"
	"github.com/stateguard/stateguard/internal/cli/ledgercli"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
	"github.com/stateguard/stateguard/internal/testsupport/scriptindex"
)

var update = flag.Bool("update", false, "rewrite the golden files of failing cmp commands")

// scriptNow is the pinned clock every script starts with:
// 2001-01-01T00:00:00Z, the base time of the reference fixtures.
const scriptNow = "978307200"

// stopsCluster runs the package's tests through pgtest.Main, which stops
// the throwaway PostgreSQL cluster TestScriptsOnPostgreSQL started.
type stopsCluster struct{ m *testing.M }

func (s stopsCluster) Run() int { return pgtest.Main(s.m) }

func TestMain(m *testing.M) {
	testscript.Main(stopsCluster{m}, map[string]func(){
		// ledgercli.Main returns the status; only this wrapper exits. On
		// Windows every call carries the external-ACL acknowledgement, as a
		// user there must give it (spec/task-state-guard.md 11.3).
		"task-state-guard": func() {
			os.Exit(ledgercli.Main(platformtest.ACLArgs(os.Args[1:]...), os.Stdout, os.Stderr))
		},
	})
}

// TestScriptsRunProgramsThroughExits: no script runs a program with exec,
// which cannot try a start again that Wine refused (see exits).
func TestScriptsRunProgramsThroughExits(t *testing.T) {
	platformtest.NoScriptExec(t, "testdata")
}

// TestScriptsAreIndexed: scripts-tests/README.md lists every script by
// topic, and only scripts that exist, so a reader can find the one to copy.
func TestScriptsAreIndexed(t *testing.T) {
	scriptindex.Check(t, filepath.Join("..", "README.md"), "testdata")
}

// TestScripts runs every script on SQLite. A script that runs on both
// engines addresses its ledger as $LEDGER (here a file in $WORK), and
// [postgres] is false.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("testdata", nil, ledgers{
		fresh: func(env *testscript.Env, name string) (string, error) {
			return filepath.Join(env.WorkDir, name+".sqlite"), nil
		},
	}))
}

// TestScriptsOnPostgreSQL runs again, on the PostgreSQL engine, every
// script that addresses its ledger as $LEDGER: each gets a fresh database
// of a throwaway cluster (dropped when the script ends), the same test
// clock, and [postgres] true for the differences the spec declares. It
// skips where no cluster can be started, except under CI=true.
func TestScriptsOnPostgreSQL(t *testing.T) {
	files := bothEngineScripts(t)
	cluster := pgtest.SharedCluster(t)
	testscript.Run(t, scriptParams("", files, ledgers{
		postgres: true,
		fresh: func(env *testscript.Env, _ string) (string, error) {
			url, drop, err := cluster.NewDatabase()
			if err != nil {
				return "", err
			}
			env.Defer(func() {
				if err := drop(); err != nil {
					env.T().Fatal(err)
				}
			})
			return url, nil
		},
	}))
}

// ledgers says where one engine's run keeps the scripts' ledgers.
type ledgers struct {
	postgres bool // [postgres]
	// fresh returns the address of a new ledger that does not exist
	// yet (a file named after name in $WORK, or a new database), for the
	// script whose environment is env.
	fresh func(env *testscript.Env, name string) (string, error)
}

// freshLedgerKey keeps, in a script's values, its run's ledgers.fresh
// bound to the script, for fresh-ledger.
type freshLedgerKey struct{}

// sqliteOnlyScripts are the scripts TestScriptsOnPostgreSQL leaves out,
// each with the reason: what it shows belongs to a ledger file (or to no
// ledger), or has its server counterpart elsewhere. Every other script
// addresses its ledger as $LEDGER and runs on both engines.
var sqliteOnlyScripts = map[string]string{
	"argv_negative_like": "its probe is --db's own value: a word read as a value shows as the ledger file made at that path",
	"doctor_findings":    "its damage is planted in the file: an orphan with foreign keys off (the server's key refuses one), schema rows and a v1 file, which a server refuses at open instead of reporting (spec 20.4 item 3); TestDoctorSeesPlantedDamage plants the server's",
	"errors_missing_db":  "a ledger file whose directory chain is missing (L1, L7); a server has no directory, and its missing ledger is errors_missing_ledger",
	"errors_server_url":  "refusals of URLs it writes itself, before anything connects: it needs no server",
	"help_texts":         "help and --version open no ledger",
	"init_create_db":     "the directories and the file init makes, their modes and the spellings of a path",
	"readonly_open":      "a read-only open of a file: its bytes, mode, links and directory (spec 12); a server's read-only commands on a missing ledger are errors_missing_ledger's",
	"restore_ledger":     "a file's restore: the set-aside files, the partial copy, SQLite's lock held by another connection; the restore into a server is restore_fresh_ledger",
}

// TestEveryScriptRunsOnBothEnginesOrSaysWhy: a script that does not
// address $LEDGER is listed in sqliteOnlyScripts with its reason, and a
// listed one does not address it, so no script stays on one engine
// unnoticed.
func TestEveryScriptRunsOnBothEnginesOrSaysWhy(t *testing.T) {
	all, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(all) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	both := map[string]bool{}
	for _, f := range bothEngineScripts(t) {
		both[f] = true
	}
	seen := map[string]bool{}
	for _, f := range all {
		name := strings.TrimSuffix(filepath.Base(f), ".txtar")
		seen[name] = true
		reason, listed := sqliteOnlyScripts[name]
		switch {
		case both[f] && listed:
			t.Errorf("%s addresses $LEDGER (it runs on both engines) but is listed as SQLite's alone", name)
		case !both[f] && !listed:
			t.Errorf("%s runs on SQLite alone: address its ledger as $LEDGER, or list it in sqliteOnlyScripts with the reason", name)
		case listed && strings.TrimSpace(reason) == "":
			t.Errorf("%s is listed with no reason", name)
		}
	}
	for name := range sqliteOnlyScripts {
		if !seen[name] {
			t.Errorf("sqliteOnlyScripts lists %s, which is gone", name)
		}
	}
}

// bothEngineScripts are the scripts that run on both engines: those that
// address their ledger as $LEDGER.
func bothEngineScripts(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(text), "$LEDGER") {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("no script addresses $LEDGER")
	}
	return files
}

// scriptParams are the parameters of a run over dir (or files) on one
// engine; engine sets $LEDGER for each script and makes fresh-ledger's.
func scriptParams(dir string, files []string, engine ledgers) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		Files:               files,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Condition: func(cond string) (bool, error) {
			if cond == "postgres" {
				return engine.postgres, nil
			}
			if holds, ok := platformtest.ScriptCondition(cond); ok {
				return holds, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			ledger, err := engine.fresh(env, "tasks")
			if err != nil {
				return err
			}
			env.Setenv("LEDGER", ledger)
			env.Values[freshLedgerKey{}] = func(name string) (string, error) { return engine.fresh(env, name) }
			env.Setenv(ledgercli.TestClockEnv, "1")
			env.Setenv(ledgercli.TestNowEnv, scriptNow)
			// What init reports here (external_acl on Windows), for cmpenv.
			env.Setenv("PERMISSION_MODEL", platformtest.PermissionModel())
			// A newline a script can put into a word (${NL}), which the
			// script language cannot spell otherwise.
			env.Setenv("NL", "\n")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"sqlite-exec":  sqliteExec,
			"pg-exec":      pgExec,
			"exits":        exits,
			"fresh-ledger": freshLedger,
			"hardlink":     hardlink,
			"break-page":   breakPage,
			"filemode":     filemode,
			"dir-holds":    dirHolds,
			"hold-open":    holdOpen,
			"let-go":       letGo,
		},
	}
}

// freshLedger implements `fresh-ledger VAR`: VAR is set to the address of
// a second ledger on the script's engine, which does not exist yet (on
// SQLite a file in $WORK named after VAR in lower case, on PostgreSQL a
// new database of the cluster, dropped when the script ends), so that a
// script running on both engines can move a ledger into a new one.
func freshLedger(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || args[0] == "" {
		ts.Fatalf("usage: fresh-ledger VAR")
	}
	fresh, ok := ts.Value(freshLedgerKey{}).(func(string) (string, error))
	if !ok {
		ts.Fatalf("fresh-ledger: no engine")
	}
	ledger, err := fresh(strings.ToLower(args[0]))
	if err != nil {
		ts.Fatalf("fresh-ledger: %v", err)
	}
	ts.Setenv(args[0], ledger)
}

// sqliteExec implements `sqlite-exec DB STATEMENT...`: it damages a ledger
// behind the CLI's back with plain SQL (foreign keys off, as a hand edit
// with the sqlite3 shell would be), so scripts can show what doctor finds.
// Each argument is one statement.
func sqliteExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! sqlite-exec")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: sqlite-exec DB STATEMENT...")
	}
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("open: %v", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, stmt := range args[1:] {
		if _, err := db.Exec(stmt); err != nil {
			ts.Fatalf("%s: %v", strings.SplitN(stmt, " ", 2)[0], err)
		}
	}
	// Fold the WAL back into the main file so no sidecar with the
	// process umask's mode is left behind.
	if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		ts.Fatalf("checkpoint: %v", err)
	}
}

// pgExec implements `pg-exec URL STATEMENT...`, sqlite-exec's counterpart
// for a ledger on PostgreSQL: it damages the ledger behind the CLI's back
// with plain SQL, the ledger's schema alone on the search path. Each
// argument is one statement.
func pgExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! pg-exec")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: pg-exec URL STATEMENT...")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, args[0])
	if err != nil {
		ts.Fatalf("pg-exec: connect: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "SELECT set_config('search_path', $1, false)", pgx.Identifier{postgres.DefaultSchema}.Sanitize()); err != nil {
		ts.Fatalf("pg-exec: search_path: %v", err)
	}
	for _, stmt := range args[1:] {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			ts.Fatalf("%s: %v", strings.SplitN(stmt, " ", 2)[0], err)
		}
	}
}

// exits implements `exits N PROGRAM ARGS...`: it runs the program like
// exec, then requires exit status N and, unless the script switched on
// TASK_STATE_GUARD_EXPLAIN=1, an empty stderr (by default the CLI never
// writes to stderr; with the switch the script compares stderr itself).
// testscript's own `! exec` accepts any failure, which would not tell 1
// (unhealthy doctor) from 2 (refused) from 3 (internal).
// It tries a start again that Wine refused, which exec cannot (no script
// gives a program stdin, which a retry would lose: ts.Exec clears it).
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits STATUS PROGRAM ARGS...")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad status")
	}
	got := 0
	if err := platformtest.RetryWineStart(ts, func() error { return ts.Exec(args[1], args[2:]...) }); err != nil {
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) {
			ts.Fatalf("exits: %v", err)
		}
		got = exitErr.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
	if ts.Getenv(ledgercli.ExplainEnv) == "1" {
		return
	}
	if stderr := ts.ReadFile("stderr"); stderr != "" {
		ts.Fatalf("stderr not empty")
	}
}

// hardlink implements `hardlink OLD NEW`: a second name for a file (the
// script language has symlink but no hard link).
func hardlink(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: hardlink OLD NEW")
	}
	if err := os.Link(ts.MkAbs(args[0]), ts.MkAbs(args[1])); err != nil {
		ts.Fatalf("hardlink: %v", err)
	}
}

// breakPage implements `break-page DB OBJECT`: it writes a page type no
// b-tree page has (1) over the first byte of the root page of the table or
// index OBJECT in the ledger DB, whose log must be folded in (no -wal), as
// a disk's or a copy's damage would: the doctor refuses a ledger whose
// tasks table's root is broken so.
func breakPage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: break-page DB OBJECT")
	}
	path := ts.MkAbs(args[0])
	if _, err := os.Lstat(path + "-wal"); err == nil {
		ts.Fatalf("break-page: the ledger has a -wal")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		ts.Fatalf("open: %v", err)
	}
	var root, pageSize int64
	err = db.QueryRow("SELECT rootpage FROM sqlite_master WHERE name = ?", args[1]).Scan(&root)
	if err == nil {
		err = db.QueryRow("PRAGMA page_size").Scan(&pageSize)
	}
	db.Close()
	if err != nil || root < 2 {
		ts.Fatalf("break-page: root page %d: %v", root, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		ts.Fatalf("break-page: %v", err)
	}
	_, err = f.WriteAt([]byte{1}, (root-1)*pageSize)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		ts.Fatalf("break-page: %v", err)
	}
}

// filemode implements `filemode FILE MODE`: the file's permission bits
// are MODE (octal), as a script on a POSIX host checks what a command
// made.
func filemode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: filemode FILE MODE")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	if err != nil {
		ts.Fatalf("filemode: bad mode")
	}
	info, err := os.Lstat(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("filemode: %v", err)
	}
	if got := uint64(info.Mode().Perm()); got != want {
		ts.Fatalf("mode %04o, want %04o", got, want)
	}
}

// dirHolds implements `dir-holds DIR NAME...`: the directory holds exactly
// these entries (no temporary file left beside them).
func dirHolds(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: dir-holds DIR NAME...")
	}
	entries, err := os.ReadDir(ts.MkAbs(args[0]))
	if err != nil {
		ts.Fatalf("dir-holds: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != strings.Join(args[1:], " ") {
		ts.Fatalf("directory holds %q, want %q", names, args[1:])
	}
}

// heldOpen are the connections hold-open keeps, by the script's path.
var heldOpen sync.Map

// holdOpen implements `hold-open DB`: the script's own process opens the
// ledger DB with SQLite and reads it, and keeps the connection open (as an
// idle worker does, holding SQLite's shared lock on a WAL ledger) until
// `let-go DB` or the end of the script. Nothing else in the script may
// open DB's files meanwhile: closing any descriptor of a file in this
// process drops the locks SQLite holds on it.
func holdOpen(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: hold-open DB")
	}
	path := ts.MkAbs(args[0])
	db, err := sql.Open("sqlite", "file:"+path+"?mode=rw")
	if err != nil {
		ts.Fatalf("open: %v", err)
	}
	db.SetMaxOpenConns(1)
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		db.Close()
		ts.Fatalf("hold-open: %v", err)
	}
	key := fmt.Sprintf("%p:%s", ts, path)
	heldOpen.Store(key, db)
	ts.Defer(func() {
		if db, ok := heldOpen.LoadAndDelete(key); ok {
			db.(*sql.DB).Close()
		}
	})
}

// letGo implements `let-go DB`: it closes what hold-open DB opened.
func letGo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: let-go DB")
	}
	db, ok := heldOpen.LoadAndDelete(fmt.Sprintf("%p:%s", ts, ts.MkAbs(args[0])))
	if !ok {
		ts.Fatalf("let-go: not held open")
	}
	if err := db.(*sql.DB).Close(); err != nil {
		ts.Fatalf("let-go: %v", err)
	}
}
