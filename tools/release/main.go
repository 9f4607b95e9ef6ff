// Command release builds the release binaries of both CLIs with nothing but
// the Go toolchain:
//
//	go run ./tools/release -version 0.1.0 -out dist
//
// For every target in linux, darwin and windows on amd64 and arm64 it runs
// `go build -trimpath` with CGO_ENABLED=0 and the version stamped through
// -ldflags -X, writing dist/<cli>_<version>_<os>_<arch>[.exe], then writes
// dist/SHA256SUMS in the format `sha256sum -c` reads. The binaries are
// reproducible from the same source, toolchain and version.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

const module = "github.com/stateguard/stateguard"

// versionVar is the variable the linker stamps (internal/cli/version).
const versionVar = module + "/internal/cli/version.stamped"

// clis are the commands released, by package directory under cmd/.
var clis = []string{"sweep-state", "task-state-guard"}

type target struct{ goos, goarch string }

var targets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// semver is the X.Y.Z[-pre][+build] shape a release version must have.
var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

func main() {
	version := flag.String("version", "", "version to stamp, X.Y.Z (required)")
	out := flag.String("out", "dist", "output directory")
	flag.Parse()
	if err := release(*version, *out, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func release(version, out string, log io.Writer) error {
	if !semver.MatchString(version) {
		return errors.New("-version must look like X.Y.Z")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var names []string
	for _, tg := range targets {
		for _, cli := range clis {
			name, err := build(cli, tg, version, out)
			if err != nil {
				return err
			}
			fmt.Fprintln(log, "built", name)
			names = append(names, name)
		}
	}
	return writeSums(out, names)
}

// build compiles one CLI for one target and returns the file's name in out.
func build(cli string, tg target, version, out string) (string, error) {
	name := fmt.Sprintf("%s_%s_%s_%s", cli, version, tg.goos, tg.goarch)
	if tg.goos == "windows" {
		name += ".exe"
	}
	cmd := exec.Command("go", "build", "-trimpath",
		"-ldflags", "-s -w -X "+versionVar+"="+version,
		"-o", filepath.Join(out, name), "./cmd/"+cli)
	cmd.Dir = moduleRoot()
	cmd.Env = append(os.Environ(), "GOOS="+tg.goos, "GOARCH="+tg.goarch, "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s for %s/%s: %v\n%s", cli, tg.goos, tg.goarch, err, msg)
	}
	return name, nil
}

// writeSums writes SHA256SUMS for the named files of dir, sorted by name.
func writeSums(dir string, names []string) error {
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// moduleRoot finds the directory holding go.mod, so the tool works from
// any directory inside the checkout.
func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "."
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "."
	}
	return filepath.Dir(gomod)
}
