package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/tools/internal/archivepath"
)

// A wheel (the Python packaging "binary distribution format") is a zip
// whose name says distribution, version and tags, holding the files to
// install and a NAME-VERSION.dist-info directory of metadata. This one is
// platform-specific and holds no Python extension: the commands are the
// static binaries, placed under NAME-VERSION.data/scripts/, which an
// installer copies as they are into the environment's scripts directory
// (bin/, or Scripts\ on Windows), with their execute bit.

// distribution is the wheel's distribution name, already in the normalised
// form the file name and the .dist-info directory use.
const distribution = "stateguard"

// pythonPackage is the module `python -m` runs. It has the Python ledger's
// import name on purpose: the wheel replaces that tool, command and module.
const pythonPackage = "task_state_guard"

// wheelVersion is the versions a wheel is made for: a plain release, which
// reads the same under semver and Python's version rules.
var wheelVersion = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`)

// platformTags are the wheel platform tags of each target: the oldest
// platform release pip must be told the binaries run on. The Linux binaries
// are static, so the oldest manylinux tag pip still knows by its glibc
// number fits; the macOS ones follow Go's own minimum for each architecture.
var platformTags = map[target]string{
	{"linux", "amd64"}:   "manylinux_2_17_x86_64",
	{"linux", "arm64"}:   "manylinux_2_17_aarch64",
	{"darwin", "amd64"}:  "macosx_10_12_x86_64",
	{"darwin", "arm64"}:  "macosx_11_0_arm64",
	{"windows", "amd64"}: "win_amd64",
	{"windows", "arm64"}: "win_arm64",
}

// wheelName is stateguard-VERSION-py3-none-PLATFORM.whl: any Python 3, no
// ABI (nothing is imported as an extension), one platform.
func wheelName(tg target, version string) string {
	return fmt.Sprintf("%s-%s-py3-none-%s.whl", distribution, version, platformTags[tg])
}

func distInfo(version string) string { return fmt.Sprintf("%s-%s.dist-info/", distribution, version) }
func dataDir(version string) string  { return fmt.Sprintf("%s-%s.data/", distribution, version) }

// wheelMembers is the exact member list of a target's wheel, in archive
// order: the package, the binaries, then the metadata with RECORD last (the
// specification asks for the .dist-info files at the end, so an installer
// streaming the archive meets them after the files they describe).
func wheelMembers(tg target, version string) []string {
	di, data := distInfo(version), dataDir(version)
	return []string{
		pythonPackage + "/__init__.py",
		pythonPackage + "/__main__.py",
		data + "scripts/" + tg.exe("sweep-state"),
		data + "scripts/" + tg.exe("task-state-guard"),
		di + "LICENSE",
		di + "METADATA",
		di + "NOTICE",
		di + "WHEEL",
		di + "RECORD",
	}
}

// writeWheel writes the target's wheel from the built binaries and checks
// what it wrote with verifyWheel, so a release never ships a wheel the
// smoke checks would refuse.
func writeWheel(tg target, version, out, root string, bins map[string]string) (string, error) {
	names := wheelMembers(tg, version)
	di := distInfo(version)
	contents := map[string]member{
		names[0]:        {data: []byte(strings.ReplaceAll(initPy, "@VERSION@", version)), mode: 0o644},
		names[1]:        {data: []byte(mainPy), mode: 0o644},
		names[2]:        {path: bins["sweep-state"], mode: 0o755},
		names[3]:        {path: bins["task-state-guard"], mode: 0o755},
		di + "LICENSE":  {path: filepath.Join(root, "LICENSE"), mode: 0o644},
		di + "METADATA": {data: []byte(metadataText(version)), mode: 0o644},
		di + "NOTICE":   {path: filepath.Join(root, "NOTICE"), mode: 0o644},
		di + "WHEEL":    {data: []byte(wheelText(tg)), mode: 0o644},
		di + "RECORD":   {mode: 0o644},
	}
	var members []member
	var record bytes.Buffer
	rw := csv.NewWriter(&record)
	for _, name := range names {
		m := contents[name]
		m.name = name
		if name == di+"RECORD" {
			// RECORD cannot hold its own hash: its line has none.
			rw.Write([]string{name, "", ""})
			rw.Flush()
			m.data = record.Bytes()
		} else {
			data, err := m.content()
			if err != nil {
				return "", err
			}
			m.data, m.path = data, ""
			rw.Write([]string{name, recordHash(data), strconv.Itoa(len(data))})
		}
		members = append(members, m)
	}
	name := wheelName(tg, version)
	if err := writeZip(filepath.Join(out, name), members); err != nil {
		return "", err
	}
	if err := verifyWheel(filepath.Join(out, name), tg, version); err != nil {
		return "", fmt.Errorf("the wheel just written fails its check: %w", err)
	}
	return name, nil
}

// recordHash is RECORD's hash field: the algorithm, '=', and the digest in
// URL-safe base64 without padding.
func recordHash(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum[:])
}

func wheelText(tg target) string {
	return "Wheel-Version: 1.0\n" +
		"Generator: stateguard tools/release\n" +
		"Root-Is-Purelib: false\n" +
		"Tag: py3-none-" + platformTags[tg] + "\n"
}

// metadataText is the core metadata. Version 2.1 holds every field used
// here and every installer in use reads it.
func metadataText(version string) string {
	return "Metadata-Version: 2.1\n" +
		"Name: " + distribution + "\n" +
		"Version: " + version + "\n" +
		"Summary: task-state-guard and sweep-state, crash-safe state engines, as static binaries\n" +
		"License: Apache-2.0\n" +
		"Requires-Python: >=3.8\n" +
		"Description-Content-Type: text/plain\n" +
		"\n" +
		"Installs the task-state-guard and sweep-state commands (static Go binaries)\n" +
		"and `python -m task_state_guard`, which runs the task-state-guard binary.\n" +
		"They replace the Python tools of the same names; uninstall the Python\n" +
		"task-state-guard first, as both own the task_state_guard module.\n"
}

// verifyWheel is the artifact check of a wheel: every member name is a safe
// relative path, the members are exactly wheelMembers (order included), each
// a regular file, RECORD lists each member once with its size and SHA-256,
// and itself with neither, each binary is an executable of this target (by
// its header: this runs for every target on any machine), and WHEEL and
// METADATA name this target and version.
func verifyWheel(file string, tg target, version string) error {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return err
	}
	defer zr.Close()
	var got []string
	contents := map[string][]byte{}
	for _, f := range zr.File {
		if why := archivepath.Unsafe(f.Name); why != "" {
			return fmt.Errorf("member %q: %s", f.Name, why)
		}
		if !f.Mode().IsRegular() {
			return fmt.Errorf("member %q is not a regular file (%v)", f.Name, f.Mode())
		}
		if _, dup := contents[f.Name]; dup {
			return fmt.Errorf("member %q appears twice", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("member %q: %w", f.Name, err)
		}
		got = append(got, f.Name)
		contents[f.Name] = data
	}
	want := wheelMembers(tg, version)
	if !slices.Equal(got, want) {
		return fmt.Errorf("members are %q, want exactly %q", got, want)
	}
	di := distInfo(version)
	if err := checkRecord(contents, di+"RECORD"); err != nil {
		return err
	}
	for _, cli := range clis {
		name := dataDir(version) + "scripts/" + tg.exe(cli)
		if err := checkExecutable(contents[name], tg); err != nil {
			return fmt.Errorf("member %q: %w", name, err)
		}
	}
	if !slices.Contains(strings.Split(string(contents[di+"WHEEL"]), "\n"), "Tag: py3-none-"+platformTags[tg]) {
		return errors.New("WHEEL does not carry the file name's tag")
	}
	meta := strings.Split(string(contents[di+"METADATA"]), "\n")
	if !slices.Contains(meta, "Name: "+distribution) || !slices.Contains(meta, "Version: "+version) {
		return errors.New("METADATA does not name the file name's distribution and version")
	}
	return nil
}

// checkRecord holds RECORD to the members: one line per member, the hash and
// size of each right, RECORD's own line empty in both, nothing else.
func checkRecord(contents map[string][]byte, recordName string) error {
	rows, err := csv.NewReader(bytes.NewReader(contents[recordName])).ReadAll()
	if err != nil {
		return fmt.Errorf("RECORD: %w", err)
	}
	seen := map[string]bool{}
	for _, row := range rows {
		if len(row) != 3 {
			return fmt.Errorf("RECORD: a line has %d fields, want 3", len(row))
		}
		name := row[0]
		data, ok := contents[name]
		if !ok {
			return fmt.Errorf("RECORD lists %q, which the wheel does not hold", name)
		}
		if seen[name] {
			return fmt.Errorf("RECORD lists %q twice", name)
		}
		seen[name] = true
		if name == recordName {
			if row[1] != "" || row[2] != "" {
				return errors.New("RECORD's own line carries a hash or size")
			}
			continue
		}
		if row[1] != recordHash(data) || row[2] != strconv.Itoa(len(data)) {
			return fmt.Errorf("RECORD's hash or size of %q does not match the member", name)
		}
	}
	for name := range contents {
		if !seen[name] {
			return fmt.Errorf("RECORD does not list %q", name)
		}
	}
	return nil
}

// initPy is the package's __init__.py.
const initPy = `"""task-state-guard from stateguard.

The command is a static binary, installed into the environment's scripts
directory; ` + "`python -m task_state_guard`" + ` runs that binary. This package
has no Python API.
"""

__version__ = "@VERSION@"
`

// mainPy is the package's __main__.py: it runs the binary with the same
// arguments, standard streams and exit status. It finds the binary in the
// installed RECORD, which the installer rewrites with the real location of
// every file whatever the scheme (a virtual environment, --user, --prefix,
// --target), and falls back on the interpreter's scripts directory.
const mainPy = `"""Run the task-state-guard binary that this wheel installed."""

import os
import sys
import sysconfig
from importlib import metadata

_DISTRIBUTION = "stateguard"
_EXECUTABLE = "task-state-guard.exe" if os.name == "nt" else "task-state-guard"


def binary_path():
    """Return the installed binary's path, or None when it is missing."""
    try:
        files = metadata.distribution(_DISTRIBUTION).files or []
    except metadata.PackageNotFoundError:
        files = []
    for entry in files:
        if entry.name == _EXECUTABLE:
            found = os.path.abspath(str(entry.locate()))
            if os.path.isfile(found):
                return found
    found = os.path.join(sysconfig.get_path("scripts"), _EXECUTABLE)
    if os.path.isfile(found):
        return found
    return None


def main():
    found = binary_path()
    if found is None:
        sys.stderr.write(
            "task_state_guard: the task-state-guard binary of the stateguard "
            "wheel is missing; reinstall the wheel\n"
        )
        return 127
    argv = [found] + sys.argv[1:]
    if os.name == "nt":
        # Windows has no exec that keeps the process: wait for the child
        # and pass its exit status on.
        import subprocess

        return subprocess.call(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(found, argv)
    return 127


if __name__ == "__main__":
    sys.exit(main())
`
