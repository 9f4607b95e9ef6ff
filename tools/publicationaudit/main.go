// Command publicationaudit checks what the project publishes, the source
// tree and each release archive, before it leaves:
//
//	go run ./tools/publicationaudit [-self-test] [PATH|ARCHIVE ...]
//
// A PATH is a directory audited as a source tree (default "."); an ARCHIVE
// is a file tools/release writes: a .tar.gz or .zip release archive, or a
// .whl wheel. The checks, each a category of finding:
//
//   - release-metadata: the licence, notice, README, security policy and
//     changelog are there (in a tree also go.mod; in a wheel its METADATA,
//     WHEEL and RECORD);
//   - secret: private keys, cloud and forge access tokens, credentials in
//     URLs, passwords and keys assigned in the text;
//   - personal-data: e-mail addresses outside the reserved example domains,
//     paths into a person's home directory;
//   - generated-artifact: compiled binaries and objects, caches, coverage
//     and profile output, editor and OS droppings, SQLite sidecar files,
//     built packages (an archive may hold the two commands, nothing else);
//   - file-mode: world-writable, setuid, setgid or sticky files, executables
//     that are not scripts, links and special files;
//   - unsafe-path: an archive member whose name could land outside the
//     directory it is unpacked into, or that appears twice;
//   - network-import: Go code the commands link (cmd/, impl/, model/,
//     internal/ but its test support) importing a network or telemetry
//     package, outside the PostgreSQL engine's path; Python code of a wheel
//     importing a network module. tools/depcheck checks the binaries.
//
// A finding is printed as its category, the relative path (for an archive,
// the archive's name and the member's; for an unsafe member name, its
// number) and how many matches the file holds: never the matched text, so
// the report itself leaks nothing. The exit status is 0 when every subject
// is clean, 1 on a finding, 2 when a subject cannot be read.
//
// -self-test plants a synthetic canary of every check in a temporary tree
// and in temporary archives, and proves that each is found, that a clean
// tree passes, and that no canary appears in the report.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("publicationaudit", flag.ContinueOnError)
	flags.SetOutput(stderr)
	self := flags.Bool("self-test", false, "plant a canary of every check in a temporary tree and prove each is found")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *self {
		return selfTest(stdout)
	}
	targets := flags.Args()
	if len(targets) == 0 {
		targets = []string{"."}
	}
	status := 0
	for _, target := range targets {
		s, err := load(target)
		if err != nil {
			fmt.Fprintf(stderr, "publicationaudit: %v\n", err)
			status = 2
			continue
		}
		if findings := audit(s); len(findings) > 0 {
			report(stdout, s, findings)
			if status == 0 {
				status = 1
			}
		} else {
			fmt.Fprintf(stdout, "publicationaudit: %s: %d files, clean\n", s.label, s.files())
		}
	}
	return status
}
