package ledger_test

import (
	"os"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/pgtest"
)

// TestMain lets the laws' runs on PostgreSQL share one throwaway cluster,
// started only when a test first asks for a database.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
