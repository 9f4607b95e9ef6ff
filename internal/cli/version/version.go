// Package version reports the version of the stateguard binaries.
//
// A release build stamps the version with the linker
// (-ldflags "-X github.com/stateguard/stateguard/internal/cli/version.stamped=X.Y.Z",
// as tools/release does); a binary installed with `go install module@vX.Y.Z`
// carries it in its build information; anything whose build information
// says "(devel)" (go run, go test, a go build or go install of a checkout)
// is a development build and reports Fallback.
package version

import (
	"runtime/debug"
	"strings"
)

// Fallback is reported by a development build: a pre-release of the version
// after the last release (CHANGELOG.md), so it never claims a release.
// Raise it when a release is cut.
const Fallback = "0.1.1-dev"

// stamped is set by the linker in release builds.
var stamped string

// String returns the version without a leading "v": the stamped version if
// any, else the main module's version from the build information when it is
// a real one, else Fallback.
func String() string {
	return choose(stamped, buildInfoVersion())
}

func buildInfoVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return bi.Main.Version
}

// choose picks the version to report; split from String so tests can feed
// it the build information's possible answers.
func choose(stamp, module string) string {
	if v := strings.TrimPrefix(stamp, "v"); v != "" {
		return v
	}
	if module != "" && module != "(devel)" {
		return strings.TrimPrefix(module, "v")
	}
	return Fallback
}
