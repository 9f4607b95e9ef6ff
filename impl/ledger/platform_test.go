package ledger

import "github.com/stateguard/stateguard/internal/testsupport/platformtest"

// onWindows is where the tests pass the external-ACL acknowledgement that
// opening requires there (spec/task-state-guard.md 11.3); elsewhere the
// option is ignored. windows_test.go tests the acknowledgement itself.
const onWindows = platformtest.Windows
