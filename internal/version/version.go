// Package version reports the version of the stateguard binaries.
//
// A release build stamps the version with the linker
// (-ldflags "-X github.com/stateguard/stateguard/internal/version.stamped=X.Y.Z",
// as tools/release does); a binary installed with `go install module@vX.Y.Z`
// carries it in its build information; anything else (go run, go test, a
// plain go build outside a tagged checkout) reports Fallback.
package version

import (
	"runtime/debug"
	"strings"
)

// Fallback is the version of this source tree, reported when the build
// carries no better one.
const Fallback = "0.1.0"

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
