//go:build !linux

package yamlsubset

// adviseHugePages does nothing here (see the Linux version).
func adviseHugePages([]byte) {}
