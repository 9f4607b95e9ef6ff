package ledgerdb

import "github.com/stateguard/stateguard/internal/testsupport/platformtest"

// onWindows is where the targets pass the external-ACL acknowledgement that
// opening requires there (spec/task-state-guard.md 11.3).
const onWindows = platformtest.Windows
