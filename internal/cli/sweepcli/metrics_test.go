package sweepcli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/stateguard/stateguard/impl/sweepstate"
	"github.com/stateguard/stateguard/internal/codec/isotime"
	"github.com/stateguard/stateguard/internal/engine/sweeprules"
)

// mainOut runs the command line and returns its stdout; it fails the test
// on a non-zero exit.
func mainOut(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := Main(args, &out, &errOut); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
	}
	return out.String()
}

// Over generated state files, the Prometheus project's parser reads every
// sample metrics prints after its word, and each value is what the
// document read prints says: items by status, sources, the lease and the
// last run (their ages from the timestamps read shows, staleness by the
// reclaim rule); no writer, id, title or path is in the text.
func TestMetricsTextMatchesRead(t *testing.T) {
	statuses := append(slices.Clone(sweepstate.ItemStatuses), "waiting", "")
	for seed := int64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			state := filepath.Join(t.TempDir(), "state.yml")
			at := func(sec int) string {
				return fmt.Sprintf("2026-07-02T%02d:%02d:%02d.%03dZ", 10+sec/3600, sec/60%60, sec%60, rng.Intn(1000))
			}
			writer := fmt.Sprintf("secret-writer-%d", seed)
			clock := 0
			ttl := rng.Intn(90)
			mainOut(t, "lease-acquire", "--state", state, "--writer", writer, "--ttl-minutes", strconv.Itoa(ttl), "--now", at(clock))
			for i := 0; i < rng.Intn(40); i++ {
				clock += rng.Intn(300)
				fields := map[string]any{"title": "secret title"}
				if s := statuses[rng.Intn(len(statuses))]; s != "" {
					fields["status"] = s
				}
				js, _ := json.Marshal(fields)
				source := []string{"gh", "chat", "mail"}[rng.Intn(3)]
				id := strconv.Itoa(rng.Intn(30))
				mainOut(t, "upsert-item", "--state", state, "--source", source, "--id", id, "--json", string(js), "--writer", writer, "--now", at(clock))
				if rng.Intn(4) == 0 {
					mainOut(t, "cursor-advance", "--state", state, "--source", source, "--to", id, "--past-item", id, "--writer", writer, "--now", at(clock))
				}
			}
			if rng.Intn(3) > 0 {
				mainOut(t, "run-record", "--state", state, "--writer", writer, "--outcome", sweeprules.Outcomes()[rng.Intn(4)], "--counts", "{}", "--timestamp", at(clock+rng.Intn(100)))
			}
			if rng.Intn(4) == 0 {
				mainOut(t, "lease-release", "--state", state, "--writer", writer)
			}
			now := at(clock + rng.Intn(2*ttl*60+1))

			text := mainOut(t, "metrics", "--state", state, "--now", now)
			word, body, _ := strings.Cut(text, "\n")
			if word != "OK" || strings.Contains(body, "secret") || strings.Contains(body, state) || strings.Contains(body, "gh") {
				t.Fatalf("answer:\n%s", text)
			}
			parser := expfmt.NewTextParser(model.LegacyValidation)
			families, err := parser.TextToMetricFamilies(strings.NewReader(body))
			if err != nil {
				t.Fatalf("the Prometheus parser refuses the text: %v\n%s", err, body)
			}
			samples := 0
			for name, f := range families {
				samples += len(f.GetMetric())
				if f.GetHelp() == "" || f.GetType() != dto.MetricType_GAUGE || strings.HasSuffix(name, "_total") || !strings.HasPrefix(name, "sweep_state_") {
					t.Errorf("family %s: help %q, type %v", name, f.GetHelp(), f.GetType())
				}
			}
			get := func(name string, labels ...string) float64 {
				t.Helper()
				for _, m := range families[name].GetMetric() {
					var got []string
					for _, lp := range m.GetLabel() {
						got = append(got, lp.GetName()+"="+lp.GetValue())
					}
					if strings.Join(got, ",") == strings.Join(labels, ",") {
						return m.GetGauge().GetValue()
					}
				}
				t.Fatalf("no sample %s%v", name, labels)
				return 0
			}

			readWord, readJSON, _ := strings.Cut(mainOut(t, "read", "--state", state), "\n")
			var doc struct {
				Lease *struct {
					Writer    string `json:"writer"`
					Timestamp string `json:"timestamp"`
					TTL       int    `json:"ttl_minutes"`
				} `json:"lease"`
				Sources map[string]any            `json:"sources"`
				Items   map[string]map[string]any `json:"items"`
				LastRun *struct {
					Timestamp string `json:"timestamp"`
					Outcome   string `json:"outcome"`
				} `json:"last_run"`
			}
			if err := json.Unmarshal([]byte(readJSON), &doc); readWord != "OK" || err != nil {
				t.Fatalf("read: %s %v", readWord, err)
			}
			byStatus := map[string]int{}
			for _, item := range doc.Items {
				s, _ := item["status"].(string)
				if !slices.Contains(sweepstate.ItemStatuses, s) {
					s = sweepstate.StatusOther
				}
				byStatus[s]++
			}
			compared := 0
			want := func(got, want float64, what string) {
				t.Helper()
				compared++
				if got != want {
					t.Errorf("%s = %v, read says %v", what, got, want)
				}
			}
			for _, s := range append(slices.Clone(sweepstate.ItemStatuses), sweepstate.StatusOther) {
				want(get("sweep_state_items", "status="+s), float64(byStatus[s]), "items "+s)
			}
			want(get("sweep_state_up"), 1, "up")
			want(get("sweep_state_sources"), float64(len(doc.Sources)), "sources")
			nowT, _ := isotime.Parse(now)
			seconds := func(stamp string) float64 {
				ts, ok := isotime.Parse(stamp)
				if !ok {
					t.Fatalf("read shows a stamp that does not parse")
				}
				return float64(nowT-ts) / 1e6
			}
			held := doc.Lease != nil && doc.Lease.Writer != ""
			want(get("sweep_state_lease_held"), map[bool]float64{true: 1}[held], "lease held")
			stale := held && (nowT-mustParse(t, doc.Lease.Timestamp)) > isotime.Instant(doc.Lease.TTL)*60_000_000
			want(get("sweep_state_lease_stale"), map[bool]float64{true: 1}[stale], "lease stale")
			if held {
				want(get("sweep_state_lease_age_seconds"), seconds(doc.Lease.Timestamp), "lease age")
			}
			for _, o := range append(sweeprules.Outcomes(), sweepstate.StatusOther) {
				want(get("sweep_state_last_run_outcome", "outcome="+o), map[bool]float64{true: 1}[doc.LastRun != nil && doc.LastRun.Outcome == o], "outcome "+o)
			}
			if doc.LastRun != nil {
				want(get("sweep_state_last_run_age_seconds"), seconds(doc.LastRun.Timestamp), "last run age")
			}
			if samples != compared {
				t.Errorf("%d samples, %d compared", samples, compared)
			}
		})
	}
}

func mustParse(t *testing.T, s string) isotime.Instant {
	t.Helper()
	v, ok := isotime.Parse(s)
	if !ok {
		t.Fatalf("stamp does not parse")
	}
	return v
}
