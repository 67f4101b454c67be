package phase3

import (
	"bufio"
	"csbench/internal/rundir"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/connresult"
	"csbench/internal/summary"
)

// Client is the view this phase takes of one connclient result
// (raw/<cell>.client-N.json, read through connresult.DecodeResult, which
// declares the document): the fields it reports, as numbers, nil when
// connclient printed null (not measured) or the mode has no such field.
type Client struct {
	Mode                   string
	Status                 string
	Source                 *string
	ConnectionsTarget      int
	ConnectionsAttempted   int64
	ConnectionsEstablished int64
	ConnectionsFailed      int64
	SetupS                 *float64
	ConnectRateTarget      *float64 // nil when connclient paced no ramp (0)
	ConnectRateAchieved    *float64
	ConnectLatencyP50Ms    *float64
	ConnectLatencyP99Ms    *float64
	ConnectLatencyMaxMs    *float64
	ConnectionsAliveEnd    *float64
	Errors                 map[string]uint64
	ClientRSSMB            *float64
	// Hists are the histograms connclient dumped, by name (connect,
	// first_connect: the first attempts', request, latency, service,
	// sender_lag); a result written before the dumps existed has none.
	Hists map[string]*connresult.HistDump
	// Ramp is how the connects were paced and retried, and what their
	// first attempts met; nil in results written before it existed.
	Ramp *connresult.RampResult

	// idle
	// The hold: when this process held every connection, when its hold
	// ended, and the end it was told (-hold-file), Unix ms; nil in results
	// written before they existed, or when it never held.
	HoldBeganAtMs, HoldEndedAtMs, HoldEndAgreedAtMs *int64
	FirstDropS                                      *float64
	Drops                                           map[string]uint64
	RequestP99Ms                                    *float64

	// lowrate
	RPSTarget            *float64
	RequestsCompleted    *float64
	RequestsFailed       *float64
	RPSAchieved          *float64
	LatencyP50Ms         *float64
	LatencyP90Ms         *float64
	LatencyP99Ms         *float64
	LatencyP999Ms        *float64
	LatencyMaxMs         *float64
	ServiceLatencyP50Ms  *float64
	ServiceLatencyP90Ms  *float64
	ServiceLatencyP99Ms  *float64
	ServiceLatencyP999Ms *float64
	ServiceLatencyMaxMs  *float64
	SenderLagP99Ms       *float64
}

func fl[T int | int64](v T) *float64 { return summary.F(float64(v)) }

// clientView turns a decoded connclient result into this phase's view.
func clientView(r *connresult.Result) *Client {
	cr := r.Common
	c := &Client{Mode: cr.Mode, Status: cr.Status, Source: cr.Source, ConnectionsTarget: cr.ConnectionsTarget,
		ConnectionsAttempted: cr.ConnectionsAttempted, ConnectionsEstablished: cr.ConnectionsEstablished, ConnectionsFailed: cr.ConnectionsFailed,
		SetupS: cr.SetupS, ConnectRateAchieved: cr.ConnectRateAchieved, ConnectLatencyP50Ms: cr.ConnectLatencyP50Ms,
		ConnectLatencyP99Ms: cr.ConnectLatencyP99Ms, ConnectLatencyMaxMs: cr.ConnectLatencyMaxMs,
		Errors: cr.Errors, ClientRSSMB: cr.ClientRSSMB, Hists: map[string]*connresult.HistDump{}, Ramp: cr.Ramp}
	put := func(name string, d *connresult.HistDump) {
		if d != nil {
			c.Hists[name] = d
		}
	}
	put("connect", cr.ConnectLatencyHist)
	if cr.Ramp != nil {
		put("first_connect", cr.Ramp.FirstAttempt.ConnectLatencyHist)
	}
	if cr.ConnectRateTarget > 0 {
		c.ConnectRateTarget = fl(cr.ConnectRateTarget)
	}
	if cr.ConnectionsAliveEnd != nil {
		c.ConnectionsAliveEnd = fl(*cr.ConnectionsAliveEnd)
	}
	if i := r.Idle; i != nil {
		c.FirstDropS, c.Drops, c.RequestP99Ms = i.FirstDropS, i.Drops, i.RequestP99Ms
		c.HoldBeganAtMs, c.HoldEndedAtMs, c.HoldEndAgreedAtMs = i.HoldBeganAtMs, i.HoldEndedAtMs, i.HoldEndAgreedAtMs
		put("request", i.RequestHist)
	}
	if l := r.Lowrate; l != nil {
		c.RPSTarget, c.RequestsCompleted, c.RequestsFailed = fl(l.RPSTarget), fl(l.RequestsCompleted), fl(l.RequestsFailed)
		c.RPSAchieved = l.RPSAchieved
		c.LatencyP50Ms, c.LatencyP90Ms, c.LatencyP99Ms, c.LatencyP999Ms, c.LatencyMaxMs = l.LatencyP50Ms, l.LatencyP90Ms, l.LatencyP99Ms, l.LatencyP999Ms, l.LatencyMaxMs
		c.ServiceLatencyP50Ms, c.ServiceLatencyP90Ms, c.ServiceLatencyP99Ms = l.ServiceLatencyP50Ms, l.ServiceLatencyP90Ms, l.ServiceLatencyP99Ms
		c.ServiceLatencyP999Ms, c.ServiceLatencyMaxMs, c.SenderLagP99Ms = l.ServiceLatencyP999Ms, l.ServiceLatencyMaxMs, l.SenderLagP99Ms
		put("latency", l.LatencyHist)
		put("service", l.ServiceLatencyHist)
		put("sender_lag", l.SenderLagHist)
	}
	return c
}

// readClients reads raw/<cell>.client-1.json, -2, ... in order; it stops at
// the first missing file and fails on one that is not connclient's JSON of
// a schema version it knows.
func readClients(dir, cell string) ([]*Client, error) {
	var out []*Client
	for i := 1; ; i++ {
		name := fmt.Sprintf("raw/%s.client-%d.json", cell, i)
		b, err := rundir.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			break
		}
		if err != nil {
			return out, err
		}
		r, err := connresult.DecodeResult(name, b)
		if err != nil {
			return out, err
		}
		out = append(out, clientView(r))
	}
	return out, nil
}

// readStatusRSS sums VmRSS (kB) over the "== PID" blocks of a file of
// concatenated /proc/PID/status (monitors/server/c10k/<cell>.<when>.status),
// and returns how many processes had one.
func readStatusRSS(path string) (kb float64, procs int, err error) {
	f, err := rundir.Open(path)
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
	f, err := rundir.Open(path)
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
