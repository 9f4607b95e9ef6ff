package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// relativeLink matches a Markdown link's target, and a path in backquotes
// that starts with ./ or ../ (how the pages name a folder without linking
// it).
var relativeLink = regexp.MustCompile("\\]\\(([^)\\s]+)\\)|`(\\.\\.?/[^`\\s]*)`")

// TestRelativeLinksResolve fails on a page that points at a file or folder
// the repository does not hold: a moved page, or a folder that was never
// part of it.
func TestRelativeLinksResolve(t *testing.T) {
	root := ".."
	pages := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		pages++
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range relativeLink.FindAllStringSubmatch(string(text), -1) {
			target := m[1] + m[2]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), filepath.FromSlash(target))); err != nil {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s points at %s, which does not exist", filepath.ToSlash(rel), target)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < 10 {
		t.Fatalf("found %d Markdown pages: the walk missed the repository", pages)
	}
}
