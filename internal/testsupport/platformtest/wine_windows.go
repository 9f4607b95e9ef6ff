//go:build windows

package platformtest

import "syscall"

// underWine reports whether this Windows process runs under Wine, whose
// ntdll exports wine_get_version (Windows' does not).
func underWine() bool {
	d, err := syscall.LoadDLL("ntdll.dll")
	if err != nil {
		return false
	}
	defer d.Release()
	_, err = d.FindProc("wine_get_version")
	return err == nil
}
