package summary

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// committedSummaries are every summary.json (and golden summary) in the
// repository: what the phases really write.
func committedSummaries(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		n := d.Name()
		if !d.IsDir() && (n == File || strings.HasSuffix(n, "summary.json.golden")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 10 {
		t.Fatalf("found %d committed summaries, want the repository's", len(out))
	}
	return out
}

// Every metric a phase writes is classified, signed or non-negative, and
// every committed summary passes the check: the table is the truth of
// what the phases write, not a guess.
func TestEveryCommittedMetricClassified(t *testing.T) {
	unclassified := map[string]string{}
	for _, p := range committedSummaries(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var s Summary
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := s.checkValues(p); err != nil {
			t.Errorf("a committed summary is refused: %v", err)
		}
		for _, c := range s.Cells {
			ms := []map[string]*float64{c.Metrics}
			for _, cc := range c.Clients {
				ms = append(ms, cc.Metrics)
			}
			for _, m := range ms {
				for k := range m {
					if _, what := metricKind(k); what == "" {
						unclassified[k] = p
					}
				}
			}
		}
	}
	for k, p := range unclassified {
		t.Errorf("metric %s (in %s) is in no rule of values.go: say whether it can be negative", k, p)
	}
}

func TestMetricKind(t *testing.T) {
	for name, want := range map[string]bool{
		"rps": true, "rps_achieved": true, "latency_p99_ms": true, "throughput_mbps": true,
		"server_cpu_pct": true, "errors_total": true, "requests": true, "server_rss_mb": true,
		"client2_retrans_segs": true, "client_time_wait_cooldown_end": true, "server_cpu_us_per_req": true,
		"latency_under_1s": true, "duration_s": true, "connect_rate_achieved_per_s": true,
		"server_rss_per_conn_kb": false, "kernel_tcp_mem_kb_per_conn": false, "kernel_kb_per_conn": false,
		// A step whose queue drained: its latency fell over the schedule.
		"latency_growth_ms_per_s": false,
	} {
		if got, _ := metricKind(name); got != want {
			t.Errorf("metricKind(%s) non-negative = %v, want %v", name, got, want)
		}
	}
}

// The values of issue 21 in a real summary: each refused on Load with a
// *ValueError naming the file and the field.
func TestLoadRefusesImpossibleValues(t *testing.T) {
	src := "../crossreport/testdata/root/01-http-baseline/2026-11-30_075500_http-baseline/summary.json"
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(orig, &doc); err != nil {
		t.Fatal(err)
	}
	cell := doc["cells"].([]any)[0].(map[string]any)
	name := cell["name"].(string)
	for _, c := range []struct {
		metric string
		v      float64
		want   string
	}{
		{"rps", -1000, `.metrics.rps is -1000: a request rate below zero`},
		{"latency_p99_ms", -5, `.metrics.latency_p99_ms is -5: a time in ms (latency, lag or bound) below zero`},
		{"throughput_mbps", -1e308, `.metrics.throughput_mbps is -1e+308: a throughput below zero`},
		{"throughput_mbps", 1e308, `.metrics.throughput_mbps is 1e+308: a throughput above 1.5 x the line rate of 1000 Mbit/s (link.rate_mbps)`},
		{"throughput_mbps", 1501, `is 1501: a throughput above 1.5 x`},
		{"errors_status", -1, `.metrics.errors_status is -1: a count of errors below zero`},
	} {
		m := cell["metrics"].(map[string]any)
		old := m[c.metric]
		m[c.metric] = c.v
		b, _ := json.Marshal(doc)
		m[c.metric] = old
		p := filepath.Join(t.TempDir(), File)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		var ve *ValueError
		want := p + `: cells["` + name + `"]` + c.want
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), p+": cells[") {
			t.Errorf("%s=%g: err = %v, want a ValueError like %q", c.metric, c.v, err, want)
		}
	}
	// As it was written, and with a throughput at the line rate, it loads.
	p := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(p, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil {
		t.Fatal(err)
	}
}

// With N client hosts each has its own link; a loopback run has no line
// rate, so only the sign is checked there.
func TestLineRateBound(t *testing.T) {
	rate := 1000.0
	mk := func(lab string, n int, v float64) *Summary {
		s := &Summary{Lab: lab, Link: Link{RateMbps: &rate}, Cells: []Cell{{Name: "a", Metrics: map[string]*float64{"throughput_mbps": &v}}}}
		if n > 1 {
			s.Clients = &Clients{N: n}
		}
		if lab == "local" {
			s.Link.RateMbps = nil
		}
		return s
	}
	for _, c := range []struct {
		lab string
		n   int
		v   float64
		ok  bool
	}{
		{"netns", 1, 1500, true}, {"netns", 1, 1500.1, false}, {"netns", 2, 2999, true}, {"netns", 2, 3001, false},
		{"local", 1, 40000, true}, {"local", 1, -1, false},
	} {
		err := mk(c.lab, c.n, c.v).checkValues("x")
		if (err == nil) != c.ok {
			t.Errorf("%s N=%d %g Mbit/s: err = %v, want ok=%v", c.lab, c.n, c.v, err, c.ok)
		}
	}
	// LAB=ssh: a NIC faster than LINK_RATE raises the bound.
	s := mk("ssh", 1, 9400)
	nic := 10000.0
	s.Hosts = map[string]Host{"server": {NICSpeed: &nic}}
	if err := s.checkValues("x"); err != nil {
		t.Errorf("ssh with a 10G NIC: %v", err)
	}
}
