package yamlsubset_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/internal/testsupport/benchseed"
	"github.com/stateguard/stateguard/model/value"
)

// benchDocument builds a realistic state document: n items of about 450
// bytes of text each (status, title, url, body, fix_ref, a nested map and a
// list), a few sources, a lease and a run record. Deterministic.
func benchDocument(n int) *value.Map {
	doc := value.NewMap()
	doc.Set("schema_version", value.Int(1))
	lease := value.NewMap()
	lease.Set("writer", "sweeper-1")
	lease.Set("timestamp", "2026-07-02T12:00:00.123456+00:00")
	lease.Set("ttl_minutes", value.Int(60))
	doc.Set("lease", lease)
	sources := value.NewMap()
	for s := range 4 {
		e := value.NewMap()
		e.Set("cursor", fmt.Sprintf("17000000%02d.000100", s))
		sources.Set(fmt.Sprintf("slack-C%03d", s), e)
	}
	doc.Set("sources", sources)
	items := value.NewMap()
	body := strings.Repeat("Steps to reproduce: open the dashboard, é, click export. ", 4)[:100]
	for i := range n {
		src := fmt.Sprintf("slack-C%03d", i%4)
		id := fmt.Sprintf("1700000%03d.%06d", i/1000, i)
		it := value.NewMap()
		it.Set("source", src)
		it.Set("status", "analyzed")
		it.Set("title", fmt.Sprintf("Export button fails for report %d", i))
		it.Set("url", "https://chat.example.com/archives/"+src+"/p"+id)
		it.Set("body", body)
		it.Set("fix_ref", fmt.Sprintf("PR#%d", 1000+i))
		it.Set("id", id)
		meta := value.NewMap()
		meta.Set("severity", value.Int(int64(i%5)))
		meta.Set("score", 0.25+float64(i%7))
		it.Set("analysis", meta)
		it.Set("labels", []value.Value{"export", "ui", value.Int(int64(i))})
		items.Set(src+":"+id, it)
	}
	doc.Set("items", items)
	run := value.NewMap()
	run.Set("timestamp", "2026-07-02T12:30:00Z")
	run.Set("outcome", "completed")
	run.Set("writer", "sweeper-1")
	counts := value.NewMap()
	counts.Set("ingested", value.Int(int64(n)))
	run.Set("counts", counts)
	doc.Set("last_run", run)
	return doc
}

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{100, 10000} {
		text := yamlsubset.Emit(benchDocument(n))
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := yamlsubset.Parse(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEmit(b *testing.B) {
	for _, n := range []int{100, 10000} {
		doc := benchDocument(n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(yamlsubset.Emit(doc))))
			b.ReportAllocs()
			for b.Loop() {
				yamlsubset.Emit(doc)
			}
		})
	}
}

// TestBenchDocumentSize keeps the benchmark honest: about 450 bytes per item.
func TestBenchDocumentSize(t *testing.T) {
	text := yamlsubset.Emit(benchDocument(1000))
	if per := len(text) / 1000; per < 400 || per > 520 {
		t.Fatalf("%d bytes per item, want about 450", per)
	}
	if _, err := yamlsubset.Parse(text); err != nil {
		t.Fatal(err)
	}
}

// TestEmitToLargeDocument: the streamed text of a document far larger than
// one chunk equals Emit's, and a failing writer's error comes back.
func TestEmitToLargeDocument(t *testing.T) {
	doc := benchDocument(500)
	want := yamlsubset.Emit(doc)
	var got bytes.Buffer
	if err := yamlsubset.EmitTo(&got, doc); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("EmitTo: err %v, %d bytes, want Emit's %d", err, got.Len(), len(want))
	}
	if err := yamlsubset.EmitTo(failingWriter{}, doc); !errors.Is(err, errWrite) {
		t.Fatalf("EmitTo to a failing writer: %v", err)
	}
}

var errWrite = errors.New("write refused")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errWrite }

// BenchmarkReadJSON is read's fast path (yamlsubset.ReadJSON) on the
// canonical text of the same documents.
func BenchmarkReadJSON(b *testing.B) {
	for _, n := range []int{100, 10000} {
		text := yamlsubset.Emit(benchDocument(n))
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := yamlsubset.ReadJSON(bytes.NewReader(text), int64(len(text)), int64(len(text)), engineRules); !ok {
					b.Fatal("declined")
				}
			}
		})
	}
}

// BenchmarkSplitItems is the fast path of the commands that touch few
// items (yamlsubset.SplitItems) on the canonical text of the same
// documents, keeping one item.
func BenchmarkSplitItems(b *testing.B) {
	for _, n := range []int{100, 10000} {
		text := string(yamlsubset.Emit(benchDocument(n)))
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, others, ok := yamlsubset.SplitItems(text, engineRules, func(k, _ string) bool { return k == "slack-C001:1700000000.000001" }); !ok || others.Len() != n-1 {
					b.Fatalf("split: ok %v, %d others", ok, others.Len())
				}
			}
		})
	}
}

// BenchmarkReadJSONSweep is read's fast path on tools/sweepbench's state
// file (benchseed.SweepState: raw ASCII strings, one list per item), the
// file tools/sweepbench measures (spec/sweep-state.md 19.2).
func BenchmarkReadJSONSweep(b *testing.B) {
	for _, n := range []int{100, 10000} {
		text := benchseed.SweepState(n)
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := yamlsubset.ReadJSON(bytes.NewReader(text), int64(len(text)), int64(len(text)), engineRules); !ok {
					b.Fatal("declined")
				}
			}
		})
	}
}
