package postgres

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// The answers to a connection that cannot be made.
const (
	reasonUnreachable  = "reach the database server failed"
	reasonLoginRefused = "database server refused the login"
)

// isClassed says whether err carries one of the ledger's contract
// classes (an internal error carries none).
func isClassed(err error) bool {
	return errors.Is(err, ledger.ErrInvalidInput) || errors.Is(err, ledger.ErrStateConflict) || errors.Is(err, ledger.ErrTaskNotFound)
}

// namesNothing fails t when an error in err's chain names any of words.
func namesNothing(t *testing.T, err error, words ...string) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		for _, w := range words {
			if strings.Contains(e.Error(), w) {
				t.Fatalf("the error %q names %q", e, w)
			}
		}
	}
}

// TestUnreachableServerHasItsOwnReason: a URL with no server behind it
// (a socket directory where nothing listens; a socket file nothing
// accepts on; a socket that accepts and never answers, until the URL's
// connect timeout) answers an internal error whose reason says the server
// could not be reached, writable and read-only alike, naming nothing of
// the URL. The timeout is no cancellation by the caller.
func TestUnreachableServerHasItsOwnReason(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix sockets of a server are a POSIX test's")
	}
	ctx := context.Background()
	empty := t.TempDir()

	refusing := t.TempDir()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(refusing, ".s.PGSQL.5432"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()

	silent := t.TempDir()
	held, err := net.Listen("unix", filepath.Join(silent, ".s.PGSQL.5432"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	for _, tc := range []struct{ name, dir, extra string }{
		{"no socket", empty, ""},
		{"a socket nothing accepts on", refusing, ""},
		{"a socket that never answers", silent, "&connect_timeout=1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := "postgres:///secret_jobs?host=" + tc.dir + "&user=secret_worker&sslmode=disable" + tc.extra
			for _, opts := range []ledger.Options{{AllowExternalACL: onWindows}, {AllowExternalACL: onWindows, ReadOnly: true}} {
				_, err := open(ctx, url, opts, settings{})
				if err == nil || isClassed(err) || ledger.Reason(err) != reasonUnreachable {
					t.Fatalf("open %+v: %v (reason %q), want an internal error %q", opts, err, ledger.Reason(err), reasonUnreachable)
				}
				namesNothing(t, err, "secret_jobs", "secret_worker", tc.dir)
			}
		})
	}
}

// TestRefusedLoginHasItsOwnReason: a server that asks for a password and
// is given a wrong one through the password file (PGPASSFILE), none at
// all, or a role it does not know, refuses the login: InvalidInput with
// its own reason, naming no role, database or socket. The right password
// from the same file opens the ledger; once the server is gone, that
// open ledger's next call answers that the server could not be reached
// (its lost connection could not be made again), and once it is back,
// the call after answers.
func TestRefusedLoginHasItsOwnReason(t *testing.T) {
	c := pgtest.NewCluster(t)
	if err := c.RequirePasswordsOnSocket(); err != nil {
		t.Fatal(err)
	}
	const role = "ledger_login"
	c.CreateLogin(t, role, "right-horse")
	ctx := context.Background()
	passfile := filepath.Join(t.TempDir(), "pgpass")
	t.Setenv("PGPASSFILE", passfile)
	t.Setenv("PGPASSWORD", "")
	for _, tc := range []struct {
		name, user, passfile string
	}{
		{"a wrong password", role, "*:*:*:" + role + ":wrong-horse\n"},
		{"no password", role, ""},
		{"an unknown role", "nobody_here", "*:*:*:nobody_here:wrong-horse\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(passfile, []byte(tc.passfile), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, opts := range []ledger.Options{{AllowExternalACL: onWindows}, {AllowExternalACL: onWindows, ReadOnly: true}} {
				_, err := open(ctx, c.SocketURL(role, tc.user), opts, settings{})
				if !errors.Is(err, ledger.ErrInvalidInput) || ledger.Reason(err) != reasonLoginRefused {
					t.Fatalf("open %+v: %v (reason %q), want InvalidInput %q", opts, err, ledger.Reason(err), reasonLoginRefused)
				}
				namesNothing(t, err, role, tc.user, c.Dir)
			}
		})
	}
	if err := os.WriteFile(passfile, []byte("*:*:*:"+role+":right-horse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := open(ctx, c.SocketURL(role, role), ledger.Options{AllowExternalACL: onWindows}, settings{})
	if err != nil {
		t.Fatalf("open with the right password: %v", err)
	}
	defer l.Close()
	task, err := l.Create(ledger.CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	_, err = l.Start(task.ID)
	if err == nil || isClassed(err) || ledger.Reason(err) != reasonUnreachable {
		t.Fatalf("start with the server gone: %v (reason %q), want an internal error %q", err, ledger.Reason(err), reasonUnreachable)
	}
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Start(task.ID); err != nil {
		t.Fatalf("start with the server back: %v", err)
	}
}
