// Command fuzzrun runs every native fuzz target of the project, one after
// another, for a fixed time each: the nightly CI entry point.
//
//	go run ./tools/fuzzrun -fuzztime 10m            # every target under ./fuzz/...
//	go run ./tools/fuzzrun -fuzztime 30s -pkgs ./fuzz/codec
//
// It lists the targets with `go test -list`, runs each with
// `go test -run=^$ -fuzz=^Name$`, and exits non-zero if any target fails.
// A failing input is written by the Go toolchain under the package's
// testdata/fuzz/<Name>/; commit it as a regression seed.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

func main() {
	fuzztime := flag.Duration("fuzztime", time.Minute, "time to fuzz each target")
	pkgs := flag.String("pkgs", "./fuzz/...", "packages holding the fuzz targets")
	parallel := flag.Int("parallel", 2, "fuzzing workers per target")
	flag.Parse()

	targets, err := listTargets(*pkgs)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzzrun:", err)
		os.Exit(2)
	}
	if len(targets) == 0 {
		fmt.Fprintln(os.Stderr, "fuzzrun: no fuzz targets found")
		os.Exit(2)
	}
	failed := 0
	for _, tg := range targets {
		fmt.Printf("== %s %s (%s)\n", tg.pkg, tg.name, *fuzztime)
		cmd := exec.Command("go", "test", tg.pkg, "-run=^$", "-fuzz=^"+tg.name+"$",
			"-fuzztime="+fuzztime.String(), fmt.Sprintf("-parallel=%d", *parallel))
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			failed++
			fmt.Printf("!! %s %s failed: %v\n", tg.pkg, tg.name, err)
		}
	}
	fmt.Printf("%d passed, %d failed\n", len(targets)-failed, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

type target struct{ pkg, name string }

// listTargets asks go test for the Fuzz functions of each package.
func listTargets(pattern string) ([]target, error) {
	out, err := exec.Command("go", "list", pattern).Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %w", pattern, err)
	}
	var targets []target
	for _, pkg := range strings.Fields(string(out)) {
		list, err := exec.Command("go", "test", pkg, "-list", "^Fuzz").Output()
		if err != nil {
			return nil, fmt.Errorf("go test -list %s: %w", pkg, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(list))
		for sc.Scan() {
			if name := sc.Text(); strings.HasPrefix(name, "Fuzz") {
				targets = append(targets, target{pkg, name})
			}
		}
	}
	return targets, nil
}
