// Package docs holds the project's prose pages beside the README and the
// spec: troubleshooting, platforms, storage, verification recipes, and
// docs/perf/ (what was measured, when and how), and the runbook for
// switching from the Python tools. It has no code; its tests keep every
// Markdown page's relative links pointing at files that exist, and run the
// runbook's shell blocks.
package docs
