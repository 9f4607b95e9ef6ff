//go:build unix && !linux

package journal

import "syscall"

// groupAlive reports whether any process of group pgid exists (on these
// systems the orphans' new parent reaps them).
func groupAlive(pgid int) bool {
	return syscall.Kill(-pgid, 0) == nil
}
