// Package depcheck holds only tests: they prove that the programs under
// cmd/ depend on nothing beyond the standard library, modernc.org/sqlite
// (with its own dependencies), golang.org/x/sys and, for the PostgreSQL
// engine, github.com/jackc/pgx/v5 with what it needs, and link none of the
// test machinery under internal/testsupport; that this project's own
// packages import no network package; that, built as the README installs
// them (CGO_ENABLED=0), they are static: no runtime/cgo, no shared
// library; that network code (package net's dialers, crypto/tls, the
// PostgreSQL driver) is reached from cmd/ only through
// impl/ledger/postgres; and, on Linux, that task-state-guard opens no
// socket on a file ledger: every command (and the demo) runs under a
// seccomp filter that kills the process at its first socket(2) or
// connect(2), and the same binary given a postgres:// URL is killed.
package depcheck
