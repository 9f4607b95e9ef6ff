// Package benchseed makes the benchmarks' workloads, for this repository's
// benchmarks, tests and tools only: a ledger of n tasks (LedgerRows) and a
// sweep state file of n items (SweepState and its variants). No program
// under cmd/ links it (tools/depcheck).
package benchseed

import (
	"fmt"
	"strings"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/value"
)

// SweepState is the sweep benchmarks' state file: n items of about 450
// bytes of text each, one source, held by lease writer "w1" from 12:00 to
// 13:00 on 2026-07-02.
func SweepState(n int) []byte {
	return yamlsubset.Emit(sweepDoc(n, false))
}

// sweepDoc is SweepState's document; with python set, every hundredth
// item (from item 7 on) has the fields N (1) and ratio (the string
// "nan"), and a second source is named off.
func sweepDoc(n int, python bool) *value.Map {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	lease := value.NewMap()
	lease.Set("writer", "w1")
	lease.Set("timestamp", "2026-07-02T12:00:00Z")
	lease.Set("ttl_minutes", value.Int(60))
	doc.Set("lease", lease)
	sources := value.NewMap()
	src := value.NewMap()
	src.Set("cursor", "1719900000.000100")
	sources.Set("slack:C42", src)
	if python {
		off := value.NewMap()
		off.Set("cursor", "1")
		sources.Set("off", off)
	}
	doc.Set("sources", sources)
	items := value.NewMap()
	for i := 0; i < n; i++ {
		it := value.NewMap()
		it.Set("source", "slack:C42")
		it.Set("status", "analyzed")
		it.Set("title", fmt.Sprintf("Item %d: login page fails after password reset", i))
		it.Set("url", fmt.Sprintf("https://chat.example.com/archives/C42/p%d", 1719900000000100+int64(i)))
		it.Set("body", strings.Repeat("Steps: open the app, reset the password, log in again. ", 4))
		it.Set("id", fmt.Sprintf("1719900000.%06d", i))
		it.Set("labels", []value.Value{"auth", "regression"})
		if python && i%100 == 7 {
			it.Set("N", value.Int(1))
			it.Set("ratio", "nan")
		}
		items.Set(fmt.Sprintf("slack:C42:1719900000.%06d", i), it)
	}
	doc.Set("items", items)
	return doc
}

// SweepPythonWritten is the file the Python engine writes for
// SweepState(n)'s document with, on one item in a hundred, a field named
// N and a float field ratio that is NaN, and a second source named off:
// the engine's own text but for those lines, where the Python writer puts
// the YAML 1.1 words N and off as bare keys and NaN as a bare nan (which
// both engines read back as the string "nan"); this engine quotes all
// three (spec/sweep-state.md §15.2.7).
func SweepPythonWritten(n int) []byte {
	text := string(yamlsubset.Emit(sweepDoc(n, true)))
	text = strings.ReplaceAll(text, "\n    \"N\": 1\n", "\n    N: 1\n")
	text = strings.ReplaceAll(text, "\n    ratio: \"nan\"\n", "\n    ratio: nan\n")
	text = strings.Replace(text, "\n  \"off\":\n", "\n  off:\n", 1)
	return []byte(text)
}

// SweepHandEdited is SweepState(n) with a comment line at its top: the
// same document, not in the engine's own form (a hand edit), which the
// fast paths take all the same: they leave comments and blank lines out,
// as the general parser does.
func SweepHandEdited(n int) []byte {
	return append([]byte("# edited by hand\n"), SweepState(n)...)
}

// SweepReindented is SweepState(n) with its lease block indented four
// spaces (another writer's indent): the same document, in the same order,
// which no fast path takes, so every command reads it with the general
// parser.
func SweepReindented(n int) []byte {
	text := string(SweepState(n))
	head, rest, _ := strings.Cut(text, "\nsources:\n")
	head = strings.ReplaceAll(head, "\n  ", "\n    ")
	return []byte(head + "\nsources:\n" + rest)
}

// SweepLegacy is a legacy state file (JSON) for import-legacy into
// SweepState(n): channel C42 with a later cursor, and the same n items
// keyed by their state keys, with the fields a legacy file carries.
func SweepLegacy(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"channels": {"C42": {"last_processed_ts": "1719900000.000200"}}, "items": {`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"slack:C42:1719900000.%06d": {"status": "analyzed", "channel": "slack:C42", "title": "Item %d: login page fails after password reset", "url": "https://chat.example.com/archives/C42/p%d"}`,
			i, i, 1719900000000100+int64(i))
	}
	b.WriteString("}}\n")
	return []byte(b.String())
}
