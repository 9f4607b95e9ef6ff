package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/postgres"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// seedNow is the instant the ledgers are seeded for and the CLI's pinned
// clock (2023-11-14T22:13:20Z).
const seedNow = 1700000000.0

func seedClock() time.Time { return time.Unix(seedNow, 0) }

// seedFile makes the SQLite ledger of n tasks at dir/tasks.sqlite.
func seedFile(dir string, n int) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "tasks.sqlite")
	l, err := ledger.Open(path, ledger.Options{AllowExternalACL: runtime.GOOS == "windows", Clock: seedClock})
	if err != nil {
		return "", err
	}
	if err := l.Close(); err != nil {
		return "", err
	}
	return path, benchseed.LedgerRows(path, n, seedNow)
}

// pgServer is the cluster, as this tool sees it.
type pgServer struct {
	cluster *pgtest.Cluster
	meter   serverMeter
	version string
}

func newServer(c *pgtest.Cluster) (*pgServer, error) {
	pid, err := c.ServerPID()
	if err != nil {
		return nil, err
	}
	s := &pgServer{cluster: c, meter: serverMeter{pid: pid}}
	err = s.admin(func(ctx context.Context, conn *pgx.Conn) error {
		return conn.QueryRow(ctx, "SHOW server_version").Scan(&s.version)
	})
	return s, err
}

// admin runs fn on a connection to the cluster's maintenance database.
func (s *pgServer) admin(fn func(context.Context, *pgx.Conn) error) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.cluster.URL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	return fn(ctx, conn)
}

// seedDatabase loads the seeded SQLite ledger at file into a new database
// named name, then vacuums and analyzes it, and returns its URL.
func (s *pgServer) seedDatabase(name, file string) (string, error) {
	err := s.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+name)
		return err
	})
	if err != nil {
		return "", err
	}
	url := s.cluster.URL(name)
	ctx := context.Background()
	if _, err := postgres.Restore(ctx, url, file, postgres.Options{FixedClock: seedClock}); err != nil {
		return "", fmt.Errorf("restoring the seed: %w", err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "VACUUM (ANALYZE)")
	return url, err
}

// copyDatabase makes database name as a copy of template and returns its
// URL and a function that drops it.
func (s *pgServer) copyDatabase(name, template string) (string, func() error, error) {
	err := s.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE "+template)
		return err
	})
	drop := func() error { return s.dropDatabase(name) }
	return s.cluster.URL(name), drop, err
}

func (s *pgServer) dropDatabase(name string) error {
	return s.admin(func(ctx context.Context, conn *pgx.Conn) error {
		_, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		return err
	})
}
