package postgres

import (
	"context"
	"strings"

	"github.com/stateguard/stateguard/impl/ledger"
	"github.com/stateguard/stateguard/impl/ledger/internal/serverstore"
)

// Restore loads the SQLite ledger backup at from into the ledger that url
// and opts name (as Open reads them; the schema is made when the
// database has none and MustExist is false), which must hold no task and
// no event: ledger.ErrStateConflict "database ledger is not empty"
// otherwise, since a server keeps no set-aside copy of what a restore
// would replace. A backup the doctor does not call healthy is refused as
// ledger.Restore refuses it; a backup in the old schema v1 is loaded as
// ledger.Restore installs it, migrated (its rows as they are), or refused
// as ledger.Restore refuses it when the migration would be. Tasks and
// events, with their sequences, are loaded in one transaction, so a
// failure loads nothing. The report counts what the ledger then holds;
// its Bytes is the size of the backup file. The other way, Backup of a
// ledger Open returns writes a SQLite ledger file.
func Restore(ctx context.Context, url, from string, opts Options) (ledger.BackupReport, error) {
	if opts.Schema != "" && (len(opts.Schema) > maxIdentifierBytes || strings.IndexByte(opts.Schema, 0) >= 0) {
		return ledger.BackupReport{}, invalidInput("schema name must be 1 to 63 bytes without NUL")
	}
	return restore(ctx, url, from, ledgerOptions(opts), settings{schema: opts.Schema, testClock: opts.testClock()})
}

// restore is Restore with the ledger's options and the engine's settings.
func restore(ctx context.Context, url, from string, opts ledger.Options, s settings) (ledger.BackupReport, error) {
	return ledger.RestoreOnServer(ctx, from, opts, func(st serverstore.Settings) (serverstore.Store, error) {
		return connect(ctx, url, st, s)
	})
}
