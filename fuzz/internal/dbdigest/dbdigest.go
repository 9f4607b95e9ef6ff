// Package dbdigest names a SQLite database by a digest of its bytes as an
// open connection reads them, for the ledger fuzz targets that remember
// answers which depend on those bytes alone.
package dbdigest

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
)

// Of is a sha256 of the database conn reads: SQLite's serialization, its
// pages with the committed frames of the -wal included. A copy of the
// files would not do: opening them with os.Open and closing them again
// drops the SQLite POSIX locks of the process.
func Of(conn *sql.Conn) (key [sha256.Size]byte, err error) {
	err = conn.Raw(func(dc any) error {
		s, ok := dc.(interface{ Serialize() ([]byte, error) })
		if !ok {
			return fmt.Errorf("the driver connection %T cannot serialize", dc)
		}
		b, err := s.Serialize()
		key = sha256.Sum256(b)
		return err
	})
	return key, err
}
