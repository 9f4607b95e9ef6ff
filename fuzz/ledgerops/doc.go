// Package ledgerops holds the native fuzz targets that run the real SQLite
// ledger next to the executable model (model/ledger): operation sequences
// under a clock that jumps, stalls and steps back; healthy ledgers damaged
// by SQL statements; and v1 files with random legacy codes and events. See
// fuzz/README.md.
package ledgerops
