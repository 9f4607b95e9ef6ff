// Package docs holds the project's prose pages that are not the spec or the
// README (docs/perf/: what was measured, when and how). It has no code; its
// test keeps every Markdown page's relative links pointing at files that
// exist.
package docs
