//go:build !windows

package platformtest

func underWine() bool { return false }
