package sweepengine

import (
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/codec/yamlsubset"
	"github.com/stateguard/stateguard/model/sweep"
	"github.com/stateguard/stateguard/model/value"
)

// epochMicros is 1970-01-01 in the model's microseconds since year 1.
const epochMicros = 62135596800 * 1_000_000

// FuzzTimeText reads any --now and lease timestamp text with the engine's
// isotime and with the model's reading of fromisoformat. Oracles: both
// agree exactly, on the instant or on the refusal; and lease-acquire by
// another writer with that --now against a lease stamped with that
// timestamp answers (LOCKED, STALE-RECLAIMED, ...) and writes as the model.
func FuzzTimeText(f *testing.F) {
	for _, s := range [][2]string{
		{"2026-07-02T12:30:00Z", "2026-07-02T12:00:00Z"}, {"2026-07-02T12:05:00.000001+00:00", "2026-07-02T12:00:00"},
		{"2026-07-02 17:35:00+05:30", "2026-07-02T12:00:00-00:00"}, {"20260702T123000,5Z", "2026-W27-4T12:00Z"},
		{"2026-07-02Z", "2026W274Z"}, {"2026-07-02T12:30:00+05:30:15.5", "2026-07-02T12"}, {"9999-12-31T23:59:59.999999-23:59", "0001-01-01T00:00:00+23:59"},
		{"2024-02-29T24:00:00", "2023-02-29"}, {"2026-07-02\u00e912:30", "2026-07-02T12:30:00.1234567z"}, {"soon", ""},
		{"2026-07-02T12:30:00Z\n", "+002026-07-02"}, {"2026-07-02T12:30:60", "2026-07-02T25:00"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, now, stamp string) {
		for _, s := range []string{now, stamp} {
			got, gotOK := isotime.Parse(s)
			want, wantOK := sweep.ParseTime(s)
			if gotOK != wantOK || gotOK && int64(got)+epochMicros != int64(want) {
				t.Fatalf("time %q: isotime %d %v, model %d %v (model minus epoch %d)", s, got, gotOK, want, wantOK, int64(want)-epochMicros)
			}
		}
		if now == "" || !utf8.ValidString(now) || !utf8.ValidString(stamp) {
			return // "" means the clock; invalid UTF-8 is misuse (D9)
		}
		lease := value.NewMap()
		lease.Set("writer", "w1")
		lease.Set("timestamp", stamp)
		lease.Set("ttl_minutes", value.Int(30))
		doc := value.NewMap()
		doc.Set("schema_version", value.Int(1))
		doc.Set("lease", lease)
		text := yamlsubset.Emit(doc)
		state := filepath.Join(t.TempDir(), "state.yml")
		mustWrite(t, state, text)
		st := stateOf(text, true)
		rc, stdout, stderr := runCLI(argv("lease-acquire", state, flag("writer", "w2"), flag("now", now)))
		if _, ok := sweep.ParseTime(now); !ok {
			// A --now the staleness check cannot read is misuse (D14).
			if rc != 2 || stdout != "" {
				t.Fatalf("--now %q (not a time): exit %d stdout %q, want misuse", now, rc, stdout)
			}
			if err := checkFile(state, st, text); err != nil {
				t.Fatalf("--now %q (not a time): %v", now, err)
			}
			return
		}
		res, next := sweep.Apply(st, sweep.LeaseAcquire{Writer: "w2", Now: now})
		if rc != 0 || stdout != answer(res) {
			t.Fatalf("--now %q over a lease stamped %q: exit %d stdout %q stderr %q; model %q", now, stamp, rc, stdout, stderr, answer(res))
		}
		if err := checkFile(state, next, text); err != nil {
			t.Fatalf("--now %q over a lease stamped %q: %v", now, stamp, err)
		}
	})
}
