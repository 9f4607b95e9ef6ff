package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The canaries are put together at run time from pieces, so that this
// file, which the tree audit reads too, holds none of them whole.
func canary(parts ...string) string { return strings.Join(parts, "") }

// fakeBinary starts like an ELF executable.
var fakeBinary = []byte("\x7fELF synthetic command")

// file is a file a self-test case writes: into a tree, or as an archive
// member.
type file struct {
	name string
	mode fs.FileMode
	data string
}

// baseTree is a clean tree: the release documents, runtime code with
// allowed imports, a test and the PostgreSQL engine's path with network
// imports (which are allowed there), and a script.
func baseTree() []file {
	return []file{
		{"CHANGELOG.md", 0o644, "# Changelog\n"},
		{"LICENSE", 0o644, "licence text\n"},
		{"NOTICE", 0o644, "notice\n"},
		{"README.md", 0o644, "# readme\n\nmail maintainers@example.org\n"},
		{"SECURITY.md", 0o644, "# security\n"},
		{"go.mod", 0o644, "module example.com/canary\n"},
		{"cmd/tool/main.go", 0o644, "package main\n\nimport \"os\"\n\nfunc main() { os.Exit(0) }\n"},
		{"impl/engine/engine_test.go", 0o644, "package engine\n\nimport \"net/http\"\n\nvar _ = http.MethodGet\n"},
		{postgresEnginePaths[0] + "conn.go", 0o644, "package postgres\n\nimport \"net\"\n\nvar _ net.Conn\n"},
		{"tools/check/main.go", 0o644, "package main\n\nimport \"net/http\"\n\nvar _ = http.MethodGet\n"},
		{".ci/run", 0o755, "#!/bin/sh\necho ok\n"},
	}
}

func baseArchive(top string) []file {
	return []file{
		{top + "CHANGELOG.md", 0o644, "# Changelog\n"},
		{top + "LICENSE", 0o644, "licence\n"},
		{top + "NOTICE", 0o644, "notice\n"},
		{top + "README.md", 0o644, "readme\n"},
		{top + "SECURITY.md", 0o644, "security\n"},
		{top + "sweep-state", 0o755, string(fakeBinary)},
		{top + "task-state-guard", 0o755, string(fakeBinary)},
	}
}

func baseWheel() []file {
	di := "stateguard-1.0.0.dist-info/"
	return []file{
		{"task_state_guard/__init__.py", 0o644, "__version__ = \"1.0.0\"\n"},
		{"task_state_guard/__main__.py", 0o644, "import os\nimport sys\n"},
		{"stateguard-1.0.0.data/scripts/sweep-state", 0o755, string(fakeBinary)},
		{"stateguard-1.0.0.data/scripts/task-state-guard", 0o755, string(fakeBinary)},
		{di + "LICENSE", 0o644, "licence\n"},
		{di + "METADATA", 0o644, "Metadata-Version: 2.1\n"},
		{di + "NOTICE", 0o644, "notice\n"},
		{di + "WHEEL", 0o644, "Wheel-Version: 1.0\n"},
		{di + "RECORD", 0o644, "x,,\n"},
	}
}

// selfCase is one planted problem: the subject's form ("tree", "tar.gz",
// "zip" or "whl"), how the files change, the finding that must appear
// (category and printed path) and the canary that must not.
type selfCase struct {
	what     string
	form     string
	change   func([]file) []file
	category string
	path     string
	canary   string
	posix    bool // needs POSIX modes in the tree
}

func add(fs ...file) func([]file) []file {
	return func(base []file) []file { return append(base, fs...) }
}

func drop(name string) func([]file) []file {
	return func(base []file) []file {
		var out []file
		for _, f := range base {
			if f.name != name {
				out = append(out, f)
			}
		}
		return out
	}
}

func selfCases() []selfCase {
	top := "stateguard_1.0.0_linux_amd64/"
	privateKey := canary("-----BEGIN ", "OPENSSH PRIVATE", " KEY-----\nCANARYKEYBODY\n")
	awsKey := canary("AK", "IA", "CANARY0123456789")
	forgeToken := canary("gh", "p_", strings.Repeat("C4nary", 6))
	gitlabToken := canary("glp", "at-", "Canary0123456789abcdef")
	chatToken := canary("xo", "xb-", "1234567890-canary")
	googleKey := canary("AI", "za", strings.Repeat("Canary0", 5))
	paymentKey := canary("sk", "_live_", "Canary0123456789ab")
	urlCredential := canary("postgres://", "canaryuser:canarypass", "@db.example.com/x")
	assigned := canary("pass", "word = \"", "canary-s3cret-value", "\"")
	email := canary("jane.canary", "@", "mailhost-canary.net")
	homePath := canary("/ho", "me/", "janecanary/notes.txt")
	windowsHome := canary(`C:\`, `Users\`, `JaneCanary\notes.txt`)
	escape := canary("..", "/canary-escape.txt")
	absolute := canary("/", "etc/canary-absolute")
	return []selfCase{
		{what: "missing NOTICE", form: "tree", change: drop("NOTICE"), category: "release-metadata", path: "NOTICE"},
		{what: "missing go.mod", form: "tree", change: drop("go.mod"), category: "release-metadata", path: "go.mod"},
		{what: "private key", form: "tree", change: add(file{"docs/key.txt", 0o644, privateKey}), category: "secret", path: "docs/key.txt", canary: "CANARYKEYBODY"},
		{what: "cloud access key", form: "tree", change: add(file{"docs/a.md", 0o644, "key " + awsKey + "\n"}), category: "secret", path: "docs/a.md", canary: awsKey},
		{what: "forge token", form: "tree", change: add(file{"docs/b.md", 0o644, forgeToken + "\n"}), category: "secret", path: "docs/b.md", canary: forgeToken},
		{what: "gitlab token", form: "tree", change: add(file{"docs/c.md", 0o644, gitlabToken + "\n"}), category: "secret", path: "docs/c.md", canary: gitlabToken},
		{what: "chat token", form: "tree", change: add(file{"docs/d.md", 0o644, chatToken + "\n"}), category: "secret", path: "docs/d.md", canary: chatToken},
		{what: "API key", form: "tree", change: add(file{"docs/e.md", 0o644, googleKey + "\n"}), category: "secret", path: "docs/e.md", canary: googleKey},
		{what: "payment key", form: "tree", change: add(file{"docs/f.md", 0o644, paymentKey + "\n"}), category: "secret", path: "docs/f.md", canary: paymentKey},
		{what: "credentials in a URL", form: "tree", change: add(file{"impl/engine/dsn.go", 0o644, "package engine\n\nconst dsn = \"" + urlCredential + "\"\n"}), category: "secret", path: "impl/engine/dsn.go", canary: "canarypass"},
		{what: "assigned password", form: "tree", change: add(file{"conf.yml", 0o644, assigned + "\n"}), category: "secret", path: "conf.yml", canary: "canary-s3cret-value"},
		{what: "e-mail address", form: "tree", change: add(file{"CONTRIBUTORS", 0o644, "Jane " + email + "\n"}), category: "personal-data", path: "CONTRIBUTORS", canary: email},
		{what: "home directory path", form: "tree", change: add(file{"docs/g.md", 0o644, "see " + homePath + "\n"}), category: "personal-data", path: "docs/g.md", canary: "janecanary"},
		{what: "Windows home directory path", form: "tree", change: add(file{"docs/h.md", 0o644, windowsHome + "\n"}), category: "personal-data", path: "docs/h.md", canary: "JaneCanary"},
		{what: "compiled binary", form: "tree", change: add(file{"bin/tool", 0o644, string(fakeBinary)}), category: "generated-artifact", path: "bin/tool"},
		{what: "Python cache", form: "tree", change: add(file{"scripts/mod.pyc", 0o644, "cache"}), category: "generated-artifact", path: "scripts/mod.pyc"},
		{what: "OS dropping", form: "tree", change: add(file{"docs/.DS_Store", 0o644, "x"}), category: "generated-artifact", path: "docs/.DS_Store"},
		{what: "SQLite sidecar", form: "tree", change: add(file{"state/tasks.sqlite-wal", 0o644, "x"}), category: "generated-artifact", path: "state/tasks.sqlite-wal"},
		{what: "release output in the tree", form: "tree", change: add(file{"dist/SHA256SUMS", 0o644, "x\n"}), category: "generated-artifact", path: "dist/SHA256SUMS"},
		{what: "world-writable file", form: "tree", posix: true, change: add(file{"docs/open.md", 0o666, "x\n"}), category: "file-mode", path: "docs/open.md"},
		{what: "executable that is no script", form: "tree", posix: true, change: add(file{"docs/run.md", 0o755, "x\n"}), category: "file-mode", path: "docs/run.md"},
		{what: "setuid file", form: "tree", posix: true, change: add(file{"docs/suid.sh", fs.ModeSetuid | 0o755, "#!/bin/sh\n"}), category: "file-mode", path: "docs/suid.sh"},
		{what: "symbolic link", form: "tree", posix: true, change: add(file{"docs/link", fs.ModeSymlink, "/etc/passwd"}), category: "file-mode", path: "docs/link"},
		{what: "network import in runtime code", form: "tree", change: add(file{"internal/codec/x/x.go", 0o644, "package x\n\nimport (\n\t\"fmt\"\n\t\"net/http\"\n)\n\nvar _ = fmt.Sprint\nvar _ = http.MethodGet\n"}), category: "network-import", path: "internal/codec/x/x.go"},
		{what: "telemetry import in a command", form: "tree", change: add(file{"cmd/tool/otel.go", 0o644, "package main\n\nimport _ \"go.opentelemetry.io/otel\"\n"}), category: "network-import", path: "cmd/tool/otel.go"},
		{what: "socket import in the model", form: "tree", change: add(file{"model/m/m.go", 0o644, "package m\n\nimport \"net\"\n\nvar _ net.Conn\n"}), category: "network-import", path: "model/m/m.go"},
		{what: "unsafe member path", form: "tar.gz", change: add(file{escape, 0o644, "x"}), category: "unsafe-path", path: "#8", canary: "canary-escape"},
		{what: "absolute member path", form: "zip", change: add(file{absolute, 0o644, "x"}), category: "unsafe-path", path: "#8", canary: "canary-absolute"},
		{what: "repeated member", form: "tar.gz", change: add(file{top + "README.md", 0o644, "again\n"}), category: "unsafe-path", path: "#8"},
		{what: "link member", form: "tar.gz", change: add(file{top + "link", fs.ModeSymlink, "/etc/passwd"}), category: "file-mode", path: top + "link"},
		{what: "world-writable member", form: "tar.gz", change: add(file{top + "notes.txt", 0o666, "x\n"}), category: "file-mode", path: top + "notes.txt"},
		{what: "archive without LICENSE", form: "zip", change: drop(top + "LICENSE"), category: "release-metadata", path: top + "LICENSE"},
		{what: "an extra executable", form: "zip", change: add(file{top + "helper", 0o755, string(fakeBinary)}), category: "generated-artifact", path: top + "helper"},
		{what: "secret in an archive", form: "tar.gz", change: add(file{top + "notes.txt", 0o644, awsKey + "\n"}), category: "secret", path: top + "notes.txt", canary: awsKey},
		{what: "wheel without RECORD", form: "whl", change: drop("stateguard-1.0.0.dist-info/RECORD"), category: "release-metadata", path: "stateguard-1.0.0.dist-info/RECORD"},
		{what: "network module in the wheel", form: "whl", change: add(file{"task_state_guard/net.py", 0o644, "import urllib.request\n"}), category: "network-import", path: "task_state_guard/net.py"},
		{what: "bytecode cache in the wheel", form: "whl", change: add(file{"task_state_guard/__pycache__/m.pyc", 0o644, "x"}), category: "generated-artifact", path: "task_state_guard/__pycache__/m.pyc"},
	}
}

// selfTest runs every case, and the clean subjects, through run, the whole
// command path; it prints one line per case and exits 1 if any case is not
// found, any clean subject is not clean, or any canary reaches the report.
func selfTest(w io.Writer) int {
	tmp, err := os.MkdirTemp("", "publicationaudit-self-test-")
	if err != nil {
		fmt.Fprintln(w, "self-test:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	top := "stateguard_1.0.0_linux_amd64/"
	failed := 0
	for i, form := range []string{"tree", "tar.gz", "zip", "whl"} {
		target, err := writeSubject(filepath.Join(tmp, fmt.Sprintf("clean%d", i)), form, baseFiles(form, top))
		if err != nil {
			fmt.Fprintln(w, "self-test:", err)
			return 2
		}
		var out bytes.Buffer
		if status := run([]string{target}, &out, io.Discard); status != 0 {
			fmt.Fprintf(w, "self-test: FAIL: the clean %s gives exit %d:\n%s", form, status, out.String())
			failed++
		}
	}
	cases := selfCases()
	for i, c := range cases {
		if c.posix && runtime.GOOS == "windows" {
			fmt.Fprintf(w, "self-test: %-18s %-34s skipped: no POSIX modes here\n", c.category, c.what)
			continue
		}
		target, err := writeSubject(filepath.Join(tmp, fmt.Sprintf("case%d", i)), c.form, c.change(baseFiles(c.form, top)))
		if err != nil {
			fmt.Fprintln(w, "self-test:", err)
			return 2
		}
		var out, errs bytes.Buffer
		status := run([]string{target}, &out, &errs)
		printed := c.path
		if c.form != "tree" {
			printed = filepath.Base(target) + ":" + c.path
		}
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			fields := strings.Fields(line)
			found = found || (len(fields) == 3 && fields[0] == c.category && fields[1] == printed)
		}
		report := out.String() + errs.String()
		echoed := c.canary != "" && strings.Contains(report, c.canary)
		if echoed {
			// Shown redacted: the self-test's own output must not echo it either.
			report = strings.ReplaceAll(report, c.canary, "[canary]")
		}
		switch {
		case echoed:
			fmt.Fprintf(w, "self-test: FAIL: %s: the report echoes the canary:\n%s", c.what, report)
			failed++
		case status != 1 || !found:
			fmt.Fprintf(w, "self-test: FAIL: %s: exit %d, want 1 with %s %s; the report:\n%s", c.what, status, c.category, printed, report)
			failed++
		default:
			fmt.Fprintf(w, "self-test: %-18s %-34s fails closed\n", c.category, c.what)
		}
	}
	if failed > 0 {
		fmt.Fprintf(w, "self-test: %d of %d checks failed\n", failed, len(cases)+4)
		return 1
	}
	fmt.Fprintf(w, "self-test: %d planted problems found, 4 clean subjects clean, no canary in any report\n", len(cases))
	return 0
}

func baseFiles(form, top string) []file {
	switch form {
	case "tree":
		return baseTree()
	case "whl":
		return baseWheel()
	}
	return baseArchive(top)
}

// writeSubject writes files as a tree at dir, or as an archive named like a
// release's beside it, and returns what to audit.
func writeSubject(dir, form string, files []file) (string, error) {
	switch form {
	case "tree":
		return dir, writeTree(dir, files)
	case "tar.gz":
		p := dir + "_stateguard_1.0.0_linux_amd64.tar.gz"
		return p, writeTestTarGz(p, files)
	case "zip":
		p := dir + "_stateguard_1.0.0_linux_amd64.zip"
		return p, writeTestZip(p, files)
	}
	p := dir + "_stateguard-1.0.0-py3-none-any.whl"
	return p, writeTestZip(p, files)
}

func writeTree(dir string, files []file) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if f.mode&fs.ModeSymlink != 0 {
			if err := os.Symlink(f.data, p); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			return err
		}
		// Chmod, not the umask-filtered create mode, so the planted modes hold.
		if err := os.Chmod(p, f.mode); err != nil {
			return err
		}
	}
	return nil
}

var testTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

func writeTestTarGz(p string, files []file) error {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: int64(f.mode.Perm()), Size: int64(len(f.data)), ModTime: testTime, Typeflag: tar.TypeReg}
		if f.mode&fs.ModeSymlink != 0 {
			hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeSymlink, f.data, 0
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeReg {
			if _, err := tw.Write([]byte(f.data)); err != nil {
				return err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return os.WriteFile(p, buf.Bytes(), 0o644)
}

func writeTestZip(p string, files []file) error {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		hdr := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: testTime}
		hdr.SetMode(f.mode)
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(f.data)); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(p, buf.Bytes(), 0o644)
}
