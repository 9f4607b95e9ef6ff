package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/stateguard/stateguard/tools/internal/archivepath"
)

// kind is what a subject is, which decides the rules that apply.
type kind int

const (
	sourceTree kind = iota
	releaseArchive
	wheel
)

// entry is one file of a subject: its slash-separated path relative to the
// tree (or its member name), its mode and, for a regular file, its bytes.
type entry struct {
	name   string
	mode   fs.FileMode
	data   []byte
	number int // position in an archive, from 1
}

type subject struct {
	label   string // as printed: the tree's path or the archive's base name
	kind    kind
	entries []entry
}

// files counts the entries that are not directories.
func (s subject) files() int {
	n := 0
	for _, e := range s.entries {
		if !e.mode.IsDir() {
			n++
		}
	}
	return n
}

// finding is one category of problem in one file, with its count.
type finding struct {
	category string
	path     string
	count    int
}

// Limits that keep a hostile archive from exhausting memory; a release
// archive is far below both.
const (
	maxMember = 256 << 20
	maxTotal  = 1 << 30
)

// load reads a directory as a source tree, or an archive by its extension.
func load(target string) (subject, error) {
	info, err := os.Stat(target)
	if err != nil {
		return subject{}, err
	}
	if info.IsDir() {
		return loadTree(target)
	}
	base := filepath.Base(target)
	switch {
	case strings.HasSuffix(base, ".whl"):
		return loadZip(target, wheel)
	case strings.HasSuffix(base, ".zip"):
		return loadZip(target, releaseArchive)
	case strings.HasSuffix(base, ".tar.gz"), strings.HasSuffix(base, ".tgz"):
		return loadTarGz(target)
	}
	return subject{}, fmt.Errorf("%s: neither a directory nor a .tar.gz, .zip or .whl archive", base)
}

// loadTree walks a directory, leaving out only the .git directory.
func loadTree(root string) (subject, error) {
	s := subject{label: root, kind: sourceTree}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" && rel != "." {
				return filepath.SkipDir
			}
			if rel != "." {
				s.entries = append(s.entries, entry{name: rel + "/", mode: fs.ModeDir | 0o755})
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{name: rel, mode: info.Mode()}
		if info.Mode().IsRegular() {
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
		}
		s.entries = append(s.entries, e)
		return nil
	})
	return s, err
}

func loadZip(file string, k kind) (subject, error) {
	s := subject{label: filepath.Base(file), kind: k}
	zr, err := zip.OpenReader(file)
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.label, err)
	}
	defer zr.Close()
	var total int64
	for i, f := range zr.File {
		e := entry{name: f.Name, mode: f.Mode(), number: i + 1}
		if e.mode.IsRegular() {
			if f.UncompressedSize64 > maxMember || total+int64(f.UncompressedSize64) > maxTotal {
				return s, fmt.Errorf("%s: member %d is larger than the audit reads", s.label, i+1)
			}
			rc, err := f.Open()
			if err != nil {
				return s, fmt.Errorf("%s: member %d: %w", s.label, i+1, err)
			}
			e.data, err = io.ReadAll(io.LimitReader(rc, maxMember+1))
			rc.Close()
			if err != nil {
				return s, fmt.Errorf("%s: member %d: %w", s.label, i+1, err)
			}
			total += int64(len(e.data))
		}
		s.entries = append(s.entries, e)
	}
	return s, nil
}

func loadTarGz(file string) (subject, error) {
	s := subject{label: filepath.Base(file), kind: releaseArchive}
	f, err := os.Open(file)
	if err != nil {
		return s, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return s, fmt.Errorf("%s: %w", s.label, err)
	}
	tr := tar.NewReader(gz)
	var total int64
	for i := 1; ; i++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return s, nil
		}
		if err != nil {
			return s, fmt.Errorf("%s: member %d: %w", s.label, i, err)
		}
		e := entry{name: hdr.Name, mode: hdr.FileInfo().Mode(), number: i}
		if hdr.Typeflag == tar.TypeLink {
			// A hard link shows as a regular file in FileInfo; it is a link.
			e.mode = fs.ModeSymlink | e.mode.Perm()
		}
		if e.mode.IsRegular() {
			if hdr.Size > maxMember || total+hdr.Size > maxTotal {
				return s, fmt.Errorf("%s: member %d is larger than the audit reads", s.label, i)
			}
			if e.data, err = io.ReadAll(tr); err != nil {
				return s, fmt.Errorf("%s: member %d: %w", s.label, i, err)
			}
			total += hdr.Size
		}
		s.entries = append(s.entries, e)
	}
}

// audit runs every check and returns the findings sorted by path, then
// category.
func audit(s subject) []finding {
	var out []finding
	add := func(category, p string, count int) {
		if count > 0 {
			out = append(out, finding{category, p, count})
		}
	}
	checkMetadata(s, add)
	if s.kind != sourceTree {
		checkMemberNames(s, add)
	}
	for _, e := range s.entries {
		checkContent(e, add)
		checkArtifact(s, e, add)
		checkMode(s, e, add)
		checkImports(s, e, add)
	}
	slices.SortFunc(out, func(a, b finding) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.category, b.category)
	})
	return out
}

// report prints the findings: category, path and count only.
func report(w io.Writer, s subject, findings []finding) {
	files := map[string]bool{}
	for _, f := range findings {
		p := f.path
		if s.kind != sourceTree {
			p = s.label + ":" + p
		}
		fmt.Fprintf(w, "%-18s %s %d\n", f.category, printable(p), f.count)
		files[f.path] = true
	}
	fmt.Fprintf(w, "publicationaudit: %s: %d findings in %d files\n", s.label, len(findings), len(files))
}

// printable quotes a path that holds anything but plain visible characters,
// so that a name cannot forge report lines.
func printable(p string) string {
	for _, r := range p {
		if r <= ' ' || r == 0x7f || r > 0x7e {
			return strconv.Quote(p)
		}
	}
	return p
}

// releaseDocs are the documents every tree and release archive carries.
var releaseDocs = []string{"CHANGELOG.md", "LICENSE", "NOTICE", "README.md", "SECURITY.md"}

func checkMetadata(s subject, add func(string, string, int)) {
	have := map[string]bool{}
	for _, e := range s.entries {
		if e.mode.IsRegular() && len(bytes.TrimSpace(e.data)) > 0 {
			have[e.name] = true
		}
	}
	var want []string
	switch s.kind {
	case sourceTree:
		want = append(slices.Clone(releaseDocs), "go.mod")
	case releaseArchive:
		top := "stateguard/"
		if len(s.entries) > 0 {
			first, _, _ := strings.Cut(s.entries[0].name, "/")
			top = first + "/"
		}
		for _, doc := range releaseDocs {
			want = append(want, top+doc)
		}
	case wheel:
		distInfo := "stateguard.dist-info/"
		for _, e := range s.entries {
			if dir, _, ok := strings.Cut(e.name, "/"); ok && strings.HasSuffix(dir, ".dist-info") {
				distInfo = dir + "/"
				break
			}
		}
		for _, name := range []string{"LICENSE", "METADATA", "NOTICE", "RECORD", "WHEEL"} {
			want = append(want, distInfo+name)
		}
	}
	for _, name := range want {
		if !have[name] {
			add("release-metadata", name, 1)
		}
	}
}

// checkMemberNames finds archive members whose names are unsafe or
// repeated; they are named by number, since the name is the problem.
func checkMemberNames(s subject, add func(string, string, int)) {
	seen := map[string]bool{}
	for _, e := range s.entries {
		if archivepath.Unsafe(e.name) != "" || seen[e.name] {
			add("unsafe-path", "#"+strconv.Itoa(e.number), 1)
		}
		seen[e.name] = true
	}
}

// contentRules are the text patterns, by category. The patterns are
// written so that this file does not match them itself.
var contentRules = []struct {
	category string
	pattern  *regexp.Regexp
	allowed  func(match []byte) bool
}{
	{"secret", regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----`), nil},
	{"secret", regexp.MustCompile(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), nil},
	{"secret", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{40,}`), nil},
	{"secret", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), nil},
	{"secret", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`), nil},
	{"secret", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}\b`), nil},
	{"secret", regexp.MustCompile(`\b[rs]k_live_[0-9A-Za-z]{16,}`), nil},
	{"secret", regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://[^/\s:@"'<>]+:[^/\s@"'<>]+@[^\s"'<>]`), nil},
	{"secret", regexp.MustCompile(`(?i)\b(password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b["']?\s*[:=]\s*["'][^"'\s]{8,}["']`), nil},
	{"personal-data", regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b`), reservedEmail},
	{"personal-data", regexp.MustCompile(`(/home|/Users)/[A-Za-z][A-Za-z0-9._-]*/|[A-Za-z]:\\+Users\\+[A-Za-z][A-Za-z0-9._-]*\\`), nil},
}

// reservedEmail allows addresses at the domains reserved for examples and
// tests (RFC 2606, RFC 6761): they cannot reach anybody.
func reservedEmail(match []byte) bool {
	_, domain, _ := strings.Cut(strings.ToLower(string(match)), "@")
	for _, reserved := range []string{"example.com", "example.org", "example.net"} {
		if domain == reserved || strings.HasSuffix(domain, "."+reserved) {
			return true
		}
	}
	for _, tld := range []string{".example", ".invalid", ".test", ".localhost"} {
		if strings.HasSuffix(domain, tld) {
			return true
		}
	}
	return false
}

func checkContent(e entry, add func(string, string, int)) {
	if len(e.data) == 0 {
		return
	}
	counts := map[string]int{}
	for _, rule := range contentRules {
		for _, m := range rule.pattern.FindAll(e.data, -1) {
			if rule.allowed == nil || !rule.allowed(m) {
				counts[rule.category]++
			}
		}
	}
	for _, category := range []string{"personal-data", "secret"} {
		add(category, e.name, counts[category])
	}
}

// artifactSuffixes are names a build, a test run, an editor or an OS
// leaves behind.
var artifactSuffixes = []string{
	".o", ".a", ".so", ".dylib", ".dll", ".exe", ".test", ".pyc", ".pyo",
	".prof", ".pprof", ".coverprofile", ".whl", ".tar.gz", ".tgz", ".swp", ".swo", "~",
	"-wal", "-shm", "-journal",
}

var artifactNames = []string{".DS_Store", "Thumbs.db", "cover.out", "coverage.out", "__pycache__", "node_modules", "core"}

// executableMagic are the first bytes of ELF, Mach-O (both byte orders,
// 32 and 64 bits, universal) and PE files.
var executableMagic = [][]byte{
	{0x7f, 'E', 'L', 'F'},
	{0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf}, {0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	{'M', 'Z'},
}

func isExecutableFile(data []byte) bool {
	for _, magic := range executableMagic {
		if bytes.HasPrefix(data, magic) {
			return true
		}
	}
	return false
}

// releasedCommand says whether an archive member is one of the two commands
// where tools/release puts them.
func releasedCommand(s subject, name string) bool {
	dir, base := path.Split(name)
	base = strings.TrimSuffix(base, ".exe")
	if base != "sweep-state" && base != "task-state-guard" {
		return false
	}
	switch s.kind {
	case releaseArchive:
		return strings.Count(dir, "/") == 1
	case wheel:
		return strings.HasSuffix(dir, ".data/scripts/") && strings.Count(dir, "/") == 2
	}
	return false
}

func checkArtifact(s subject, e entry, add func(string, string, int)) {
	if releasedCommand(s, e.name) || strings.HasSuffix(e.name, "/") {
		return // a directory is judged by the files in it
	}
	count := 0
	trimmed := strings.TrimSuffix(e.name, "/")
	base := path.Base(trimmed)
	for _, segment := range strings.Split(trimmed, "/") {
		if slices.Contains(artifactNames, segment) {
			count++
			break
		}
	}
	if s.kind == sourceTree && strings.HasPrefix(trimmed, "dist/") {
		count++ // tools/release's default output directory
	}
	if count == 0 {
		for _, suffix := range artifactSuffixes {
			if strings.HasSuffix(base, suffix) {
				count++
				break
			}
		}
	}
	if count == 0 && isExecutableFile(e.data) {
		count++
	}
	add("generated-artifact", e.name, count)
}

func checkMode(s subject, e entry, add func(string, string, int)) {
	if s.kind == sourceTree && runtime.GOOS == "windows" {
		return // no POSIX modes to judge on a Windows checkout
	}
	m := e.mode
	count := 0
	switch {
	case m.IsDir():
	case m.IsRegular():
		if m&0o111 != 0 && !bytes.HasPrefix(e.data, []byte("#!")) && !releasedCommand(s, e.name) {
			count++ // executable but neither a script nor a command
		}
	default:
		count++ // a link, device, pipe or socket
	}
	if m.Perm()&0o002 != 0 || (s.kind != sourceTree && m.Perm()&0o020 != 0) {
		count++
	}
	if m&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 && !m.IsDir() {
		count++
	}
	add("file-mode", e.name, count)
}

// runtimeRoots are where the code the commands link lives; testSupport is
// the part of internal/ no command links.
var (
	runtimeRoots = []string{"cmd/", "impl/", "internal/", "model/"}
	testSupport  = "internal/testsupport/"
)

// postgresEnginePaths may import a network driver: the PostgreSQL engine
// talks to its server. It lives in its own package, impl/ledger/postgres
// (docs/design/ledger-on-postgresql.md); keep the list in step with it.
var postgresEnginePaths = []string{"impl/ledger/postgres/"}

// networkPackages are imports that open connections or send data away:
// exact paths, and prefixes ending in "/".
var networkPackages = []string{
	"net", "net/http", "net/http/", "net/rpc", "net/rpc/", "net/smtp", "crypto/tls", "expvar", "log/syslog",
	"github.com/jackc/pgx/", "github.com/lib/pq",
	"go.opentelemetry.io/", "github.com/prometheus/client_golang/", "github.com/getsentry/",
	"github.com/DataDog/", "gopkg.in/DataDog/", "github.com/segmentio/analytics-go", "github.com/posthog/",
	"cloud.google.com/", "github.com/aws/",
}

func isNetworkPackage(imp string) bool {
	for _, p := range networkPackages {
		if imp == p || (strings.HasSuffix(p, "/") && (strings.HasPrefix(imp, p) || imp == strings.TrimSuffix(p, "/"))) {
			return true
		}
	}
	return false
}

var pythonNetworkImport = regexp.MustCompile(`(?m)^\s*(import|from)\s+(socket|ssl|urllib|http|requests|ftplib|smtplib|xmlrpc)\b`)

func checkImports(s subject, e entry, add func(string, string, int)) {
	if !e.mode.IsRegular() {
		return
	}
	if s.kind == wheel && strings.HasSuffix(e.name, ".py") {
		add("network-import", e.name, len(pythonNetworkImport.FindAll(e.data, -1)))
		return
	}
	if s.kind != sourceTree || !strings.HasSuffix(e.name, ".go") || strings.HasSuffix(e.name, "_test.go") {
		return
	}
	inRuntime := false
	for _, root := range runtimeRoots {
		inRuntime = inRuntime || strings.HasPrefix(e.name, root)
	}
	if !inRuntime || strings.HasPrefix(e.name, testSupport) || strings.Contains(e.name, "/testdata/") {
		return
	}
	for _, p := range postgresEnginePaths {
		if strings.HasPrefix(e.name, p) {
			return
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), e.name, e.data, parser.ImportsOnly)
	if err != nil {
		add("network-import", e.name, 1) // unreadable imports cannot be shown clean
		return
	}
	count := 0
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err != nil || isNetworkPackage(p) {
			count++
		}
	}
	add("network-import", e.name, count)
}
