package main

import (
	"bytes"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stateguard/stateguard/internal/testsupport/platformtest"
)

// fakeExecutable is the smallest header of an executable for tg that the
// standard library's readers accept: no sections, no load commands.
func fakeExecutable(tg target) []byte {
	le := binary.LittleEndian
	switch tg.goos {
	case "linux":
		h := make([]byte, 64)
		copy(h, "\x7fELF\x02\x01\x01")
		le.PutUint16(h[16:], uint16(elf.ET_EXEC))
		le.PutUint16(h[18:], map[string]uint16{"amd64": uint16(elf.EM_X86_64), "arm64": uint16(elf.EM_AARCH64)}[tg.goarch])
		le.PutUint32(h[20:], 1)
		le.PutUint16(h[52:], 64)
		le.PutUint16(h[54:], 56)
		le.PutUint16(h[58:], 64)
		return h
	case "darwin":
		h := make([]byte, 32)
		le.PutUint32(h, macho.Magic64)
		le.PutUint32(h[4:], uint32(map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[tg.goarch]))
		le.PutUint32(h[12:], uint32(macho.TypeExec))
		return h
	default:
		// pe.NewFile reads past the COFF header, so the fake is longer.
		h := make([]byte, 0x40+24+232)
		copy(h, "MZ")
		le.PutUint32(h[0x3c:], 0x40)
		copy(h[0x40:], "PE\x00\x00")
		le.PutUint16(h[0x44:], map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[tg.goarch])
		return h
	}
}

// The header reader names each released target as the standard library's
// readers of the three formats do, and refuses the rest.
func TestExecutableTarget(t *testing.T) {
	for tg := range platformTags {
		h := fakeExecutable(tg)
		var machine string
		switch tg.goos {
		case "linux":
			f, err := elf.NewFile(bytes.NewReader(h))
			if err != nil {
				t.Fatalf("%s: %v", tg, err)
			}
			machine = f.Machine.String()
		case "darwin":
			f, err := macho.NewFile(bytes.NewReader(h))
			if err != nil {
				t.Fatalf("%s: %v", tg, err)
			}
			machine = f.Cpu.String()
		default:
			f, err := pe.NewFile(bytes.NewReader(h))
			if err != nil {
				t.Fatalf("%s: %v", tg, err)
			}
			machine = map[uint16]string{pe.IMAGE_FILE_MACHINE_AMD64: "amd64", pe.IMAGE_FILE_MACHINE_ARM64: "arm64"}[f.Machine]
		}
		got, ok := executableTarget(h)
		if !ok || got != tg {
			t.Errorf("%s (the standard library reads machine %s): read as %v, %v", tg, machine, got, ok)
		}
		for other := range platformTags {
			if other != tg && checkExecutable(h, other) == nil {
				t.Errorf("%s's header passes as %s's", tg, other)
			}
		}
		if _, ok := executableTarget(h[:4]); ok {
			t.Errorf("%s: a truncated header is accepted", tg)
		}
	}
	for _, junk := range [][]byte{nil, []byte("binary of sweep-state"), []byte("#!/bin/sh\nexec true\n"), []byte("\x7fELF\x02\x02\x01")} {
		if _, ok := executableTarget(junk); ok {
			t.Errorf("%q is taken for an executable", junk)
		}
	}
}

// The binary this test runs as is read as the machine's own target.
func TestExecutableTargetOfThisBinary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	tg := hostTarget(t)
	if err := checkExecutable(data, tg); err != nil {
		t.Errorf("this test binary: %v", err)
	}
}

// pipFor runs pip's resolver for another platform: it installs a wheel
// into a plain directory (--target), choosing by the platform tag given
// instead of the machine's, and runs nothing from it.
func pipFor(t *testing.T, python, wheel, platform, into string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(python, "-m", "pip", "install", "--disable-pip-version-check", "--no-index", "--no-deps",
		"--only-binary=:all:", "--platform", platform, "--target", into, wheel)
	cmd.Env = offlinePip()
	return cmd.CombinedOutput()
}

// Every target's wheel is one pip installs for that target's platform and
// refuses for the same system's other architecture (pip's own tag rules,
// run here for each target without running its binaries; another
// system's tag differs in its name already); installed, it lays out the
// package and the two binaries, byte for byte, where the environment's
// scripts go. The binaries themselves run only where they were built
// for: the host's wheel in TestWheelInstallsOffline, Windows amd64 in the
// Wine run and on the CI workflow's Windows runner, macOS on its macOS
// runner.
func TestPipTakesEachTargetsWheelForItsPlatformOnly(t *testing.T) {
	// The Wine run has neither a go command nor a Windows Python; its
	// condition is GoCommand's (requirePython would fail under CI=true).
	platformtest.GoCommand(t)
	python := requirePython(t)
	if err := exec.Command(python, "-m", "pip", "--version").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s has no pip: %v", python, err)
		}
		t.Skipf("%s has no pip: %v", python, err)
	}
	otherArch := map[string]string{"amd64": "arm64", "arm64": "amd64"}
	for tg, tag := range platformTags {
		t.Run(tg.goos+"-"+tg.goarch, func(t *testing.T) {
			t.Parallel()
			wheel := fakeWheel(t, tg)
			into := t.TempDir()
			if out, err := pipFor(t, python, wheel, tag, into); err != nil {
				t.Fatalf("pip refuses the wheel for %s: %v\n%s", tag, err, out)
			}
			for _, cli := range clis {
				got, err := os.ReadFile(filepath.Join(into, "bin", tg.exe(cli)))
				if err != nil {
					t.Error(err)
					continue
				}
				if want := append(fakeExecutable(tg), "binary of "+cli...); !bytes.Equal(got, want) {
					t.Errorf("installed %s differs from the wheel's", cli)
				}
			}
			if _, err := os.Stat(filepath.Join(into, pythonPackage, "__main__.py")); err != nil {
				t.Error(err)
			}
			other := platformTags[target{tg.goos, otherArch[tg.goarch]}]
			if out, err := pipFor(t, python, wheel, other, t.TempDir()); err == nil {
				t.Errorf("the wheel installs for %s:\n%s", other, out)
			}
		})
	}
}
