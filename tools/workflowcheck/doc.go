// Package workflowcheck holds only a test: it parses the GitHub Actions
// workflows under .github/workflows, which cannot run here, and checks
// their structure and the commands they promise (see workflows_test.go).
package workflowcheck
