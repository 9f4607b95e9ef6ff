// Package docs holds the project's prose pages beside the README and the
// spec: troubleshooting, platforms, storage, verification recipes, and
// docs/perf/ (what was measured, when and how). It has no code; its test
// keeps every Markdown page's relative links pointing at files that exist.
package docs
