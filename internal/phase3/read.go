package phase3

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Client is what one connclient process printed (raw/<cell>.client-N.json):
// the fields this phase reports. A pointer is nil when connclient printed
// null (not measured).
type Client struct {
	Mode                   string            `json:"mode"`
	Status                 string            `json:"status"`
	Source                 *string           `json:"source"`
	ConnectionsTarget      int               `json:"connections_target"`
	ConnectionsAttempted   int64             `json:"connections_attempted"`
	ConnectionsEstablished int64             `json:"connections_established"`
	ConnectionsFailed      int64             `json:"connections_failed"`
	SetupS                 *float64          `json:"setup_s"`
	ConnectRateAchieved    *float64          `json:"connect_rate_achieved_per_s"`
	ConnectLatencyP50Ms    *float64          `json:"connect_latency_p50_ms"`
	ConnectLatencyP99Ms    *float64          `json:"connect_latency_p99_ms"`
	ConnectLatencyMaxMs    *float64          `json:"connect_latency_max_ms"`
	ConnectionsAliveEnd    *float64          `json:"connections_alive_end"`
	Errors                 map[string]uint64 `json:"errors"`
	StatusCodes            map[string]uint64 `json:"status_codes"`
	ClientRSSMB            *float64          `json:"client_rss_mb"`

	// idle
	HoldS        *float64          `json:"hold_s"`
	HoldElapsedS *float64          `json:"hold_elapsed_s"`
	FirstDropS   *float64          `json:"first_drop_s"`
	Drops        map[string]uint64 `json:"drops"`
	RequestP50Ms *float64          `json:"request_latency_p50_ms"`
	RequestP99Ms *float64          `json:"request_latency_p99_ms"`

	// lowrate
	RPSTarget            *float64 `json:"rps_target"`
	ElapsedS             *float64 `json:"elapsed_s"`
	RequestsScheduled    *float64 `json:"requests_scheduled"`
	RequestsCompleted    *float64 `json:"requests_completed"`
	RequestsFailed       *float64 `json:"requests_failed"`
	RPSAchieved          *float64 `json:"rps_achieved"`
	LatencyP50Ms         *float64 `json:"latency_p50_ms"`
	LatencyP90Ms         *float64 `json:"latency_p90_ms"`
	LatencyP99Ms         *float64 `json:"latency_p99_ms"`
	LatencyP999Ms        *float64 `json:"latency_p999_ms"`
	LatencyMaxMs         *float64 `json:"latency_max_ms"`
	ServiceLatencyP50Ms  *float64 `json:"service_latency_p50_ms"`
	ServiceLatencyP90Ms  *float64 `json:"service_latency_p90_ms"`
	ServiceLatencyP99Ms  *float64 `json:"service_latency_p99_ms"`
	ServiceLatencyP999Ms *float64 `json:"service_latency_p999_ms"`
	ServiceLatencyMaxMs  *float64 `json:"service_latency_max_ms"`
	SenderLagP99Ms       *float64 `json:"sender_lag_p99_ms"`
}

// readClients reads raw/<cell>.client-1.json, -2, ... in order; it stops at
// the first missing file and fails on one that is not connclient's JSON.
func readClients(dir, cell string) ([]*Client, error) {
	var out []*Client
	for i := 1; ; i++ {
		p := filepath.Join(dir, "raw", fmt.Sprintf("%s.client-%d.json", cell, i))
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return out, err
		}
		var c Client
		if err := json.Unmarshal(b, &c); err != nil {
			return out, fmt.Errorf("raw/%s: not connclient's JSON: %w", filepath.Base(p), err)
		}
		if c.Mode == "" {
			return out, fmt.Errorf("raw/%s: not connclient's JSON (no mode)", filepath.Base(p))
		}
		out = append(out, &c)
	}
	return out, nil
}

// readKV reads KEY=VALUE lines ('#' starts a comment line).
func readKV(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			m[k] = v
		}
	}
	return m, sc.Err()
}

// readStatusRSS sums VmRSS (kB) over the "== PID" blocks of a file of
// concatenated /proc/PID/status (monitors/server/c10k/<cell>.<when>.status),
// and returns how many processes had one.
func readStatusRSS(path string) (kb float64, procs int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "VmRSS:" && fields[2] == "kB" {
			v, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: VmRSS %q", path, fields[1])
			}
			kb += v
			procs++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	if procs == 0 {
		return 0, 0, fmt.Errorf("%s: no VmRSS line (the server processes were gone?)", path)
	}
	return kb, procs, nil
}

// countLines counts the non-empty lines of a file: one socket per line of
// `ss -H` output.
func countLines(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "" {
			n++
		}
	}
	return float64(n), sc.Err()
}

// TWWait is a TIME_WAIT wait recorded by lib/c10k.sh: one "epoch_ms count"
// line per poll.
type TWWait struct {
	WaitS       float64 // first poll to last
	Start, End  float64 // TIME_WAIT sockets at the first and last poll
	Polls       int
	BelowTarget bool // the last count is below the threshold
}

// readTWWait reads a tw-wait TSV; threshold decides BelowTarget (NaN: false).
func readTWWait(path string, threshold float64) (*TWWait, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var first, last [2]float64
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 || fields[0] == "epoch_ms" {
			continue
		}
		t, err1 := strconv.ParseFloat(fields[0], 64)
		c, err2 := strconv.ParseFloat(fields[1], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		if n == 0 {
			first = [2]float64{t, c}
		}
		last = [2]float64{t, c}
		n++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no poll recorded", path)
	}
	return &TWWait{WaitS: (last[0] - first[0]) / 1000, Start: first[1], End: last[1], Polls: n,
		BelowTarget: last[1] < threshold}, nil
}

// sources lists the plan's per-source socket counts: "source.<ip>.time_wait".
func sources(plan map[string]string, what string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range plan {
		rest, ok := strings.CutPrefix(k, "source.")
		if !ok {
			continue
		}
		ip, kind, ok := cutLast(rest, ".")
		if !ok || kind != what {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[ip] = f
		}
	}
	return out
}

func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
