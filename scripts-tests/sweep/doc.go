// Package sweep holds the script tests of the sweep-state command line: each
// testdata/*.txtar file is a testscript (github.com/rogpeppe/go-internal)
// that runs sweep-state in-process and pins its stdout, exit codes and state
// file bytes. Read them to learn the CLI (scripts-tests/README.md indexes
// them by topic and explains their commands); run `go test ./scripts-tests/sweep
// -update` to rewrite golden files after an intended change.
package sweep
