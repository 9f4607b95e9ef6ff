package storageguard

import "github.com/stateguard/stateguard/impl/ledger/internal/ledgererr"

func invalidInput(msg string) error  { return ledgererr.InvalidInput(msg) }
func stateConflict(msg string) error { return ledgererr.StateConflict(msg) }

func internal(op string, err error) error { return ledgererr.Internal(op, err) }
