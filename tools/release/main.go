// Command release builds the release files of both CLIs with nothing but
// the Go toolchain:
//
//	go run ./tools/release -version 0.1.0 -out dist [-targets linux/amd64,darwin/arm64] [-wheels]
//
// For each target asked for (default: linux, darwin and windows on amd64
// and arm64) it builds both commands with CGO_ENABLED=0 and the version
// stamped, and writes into the output directory:
//
//   - the binaries, <cli>_<version>_<os>_<arch>[.exe];
//   - one archive holding both with the licence and the main documents,
//     stateguard_<version>_<os>_<arch>.tar.gz (.zip for windows);
//   - with -wheels, one Python wheel, stateguard-<version>-py3-none-<platform>.whl,
//     that installs the commands into the environment's scripts directory
//     and `python -m task_state_guard` (wheel.go);
//   - SHA256SUMS over all of them, in the format `sha256sum -c` reads.
//
// Two runs of the same source, toolchain, version and target give the same
// bytes: see reproducible below and the archive writers in archive.go.
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

func (tg target) String() string { return tg.goos + "/" + tg.goarch }

// exe is the file name of a command on this target.
func (tg target) exe(cli string) string {
	if tg.goos == "windows" {
		return cli + ".exe"
	}
	return cli
}

// allTargets are the released targets, in the order they are built.
var allTargets = []target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// semver is the X.Y.Z[-pre][+build] shape a release version must have.
var semver = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// options are what one run builds.
type options struct {
	version string
	out     string
	targets []target
	wheels  bool
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "version to stamp, X.Y.Z (required)")
	flag.StringVar(&o.out, "out", "dist", "output directory")
	targetList := flag.String("targets", "", "comma-separated OS/ARCH targets to build (default: all six)")
	flag.BoolVar(&o.wheels, "wheels", false, "also write one Python wheel per target")
	flag.Parse()
	var err error
	if o.targets, err = parseTargets(*targetList); err == nil {
		err = release(o, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// parseTargets reads -targets: empty means all; each entry must be a
// released target; the result keeps allTargets' order, without repeats.
func parseTargets(list string) ([]target, error) {
	if strings.TrimSpace(list) == "" {
		return allTargets, nil
	}
	asked := map[target]bool{}
	for _, entry := range strings.Split(list, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(entry), "/")
		tg := target{goos, goarch}
		if !ok || !slices.Contains(allTargets, tg) {
			return nil, fmt.Errorf("-targets: %q is not one of %s", entry, targetNames(allTargets))
		}
		asked[tg] = true
	}
	var out []target
	for _, tg := range allTargets {
		if asked[tg] {
			out = append(out, tg)
		}
	}
	return out, nil
}

func targetNames(ts []target) string {
	names := make([]string, len(ts))
	for i, tg := range ts {
		names[i] = tg.String()
	}
	return strings.Join(names, ", ")
}

func release(o options, log io.Writer) error {
	if !semver.MatchString(o.version) {
		return errors.New("-version must look like X.Y.Z")
	}
	if o.wheels && !wheelVersion.MatchString(o.version) {
		return errors.New("-wheels needs a plain X.Y.Z version (a wheel's version follows Python's rules, not semver's)")
	}
	if len(o.targets) == 0 {
		o.targets = allTargets
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	root := moduleRoot()
	var names []string
	for _, tg := range o.targets {
		bins := map[string]string{}
		for _, cli := range clis {
			name, err := build(cli, tg, o.version, o.out)
			if err != nil {
				return err
			}
			fmt.Fprintln(log, "built", name)
			names = append(names, name)
			bins[cli] = filepath.Join(o.out, name)
		}
		name, err := writeArchive(tg, o.version, o.out, root, bins)
		if err != nil {
			return err
		}
		fmt.Fprintln(log, "wrote", name)
		names = append(names, name)
		if o.wheels {
			name, err := writeWheel(tg, o.version, o.out, root, bins)
			if err != nil {
				return err
			}
			fmt.Fprintln(log, "wrote", name)
			names = append(names, name)
		}
	}
	return writeSums(o.out, names)
}

// reproducible are the go build flags that make a binary depend only on the
// source, the toolchain, the version and the target: -trimpath drops the
// build machine's paths, -buildvcs=false keeps the checkout's state (commit,
// commit time, a modified tree) out of the build information, so a build
// from an unpacked source archive matches one from git, and -buildid= in
// ldflags leaves the build ID empty instead of a hash of the inputs that
// includes the build cache's view of them. Go writes no time stamps into a
// binary. -s -w drop the symbol table and DWARF, as before.
func reproducible(version string) []string {
	return []string{"-trimpath", "-buildvcs=false",
		"-ldflags", "-s -w -buildid= -X " + versionVar + "=" + version}
}

// build compiles one CLI for one target and returns the file's name in out.
func build(cli string, tg target, version, out string) (string, error) {
	name := fmt.Sprintf("%s_%s_%s_%s", cli, version, tg.goos, tg.goarch)
	if tg.goos == "windows" {
		name += ".exe"
	}
	args := append([]string{"build"}, reproducible(version)...)
	args = append(args, "-o", filepath.Join(out, name), "./cmd/"+cli)
	cmd := exec.Command("go", args...)
	cmd.Dir = moduleRoot()
	// The instruction-set levels are pinned so that a GOAMD64 or GOARM64
	// in the builder's environment cannot change the bytes.
	cmd.Env = append(os.Environ(), "GOOS="+tg.goos, "GOARCH="+tg.goarch, "CGO_ENABLED=0",
		"GOAMD64=v1", "GOARM64=v8.0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s for %s: %v\n%s", cli, tg, err, msg)
	}
	return name, nil
}

// writeSums writes SHA256SUMS for the named files of dir, sorted by name.
func writeSums(dir string, names []string) error {
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		sum, _, err := fileSHA256(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum), name)
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(b.String()), 0o644)
}

func fileSHA256(path string) (sum []byte, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := sha256.New()
	size, err = io.Copy(h, f)
	return h.Sum(nil), size, err
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
