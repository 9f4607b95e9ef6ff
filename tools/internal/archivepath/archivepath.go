// Package archivepath judges the member names of release archives (tar, zip,
// wheels) for the tools that write and audit them.
package archivepath

import (
	"path"
	"strings"
)

// Unsafe says why an archive member's name could write outside the
// directory it is unpacked into, or "" when it cannot: an absolute path, a
// Windows drive or a backslash, an empty, "." or ".." segment.
func Unsafe(name string) string {
	switch {
	case name == "":
		return "empty name"
	case strings.HasPrefix(name, "/"):
		return "absolute path"
	case strings.Contains(name, `\`):
		return "backslash in the name"
	case len(name) >= 2 && name[1] == ':':
		return "drive letter"
	}
	for _, seg := range strings.Split(strings.TrimSuffix(name, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "empty, . or .. segment"
		}
	}
	if path.Clean(name) != strings.TrimSuffix(name, "/") {
		return "not a clean path"
	}
	return ""
}
