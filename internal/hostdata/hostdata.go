// Package hostdata turns the monitors both hosts recorded during a run into
// per-cell figures: CPU of each host (mpstat), CPU and RSS of the server
// processes (pidstat), network counters (nstat deltas) and socket states
// (/proc/net/sockstat) after the cell. Every phase uses it the same way:
// each figure is a field of a typed struct (CPUFigures, NICFigures, ...),
// per host name, which a phase's figures hold as a prefixed map
// (summary.PutFigures writes them as server_cpu_pct, client_nic_rx_mbps).
package hostdata

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"csbench/internal/clienthosts"
	"csbench/internal/decimal"
	"csbench/internal/kv"
	"csbench/internal/parse"
	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// Hosts holds what was recorded on the server and the client.
type Hosts struct {
	dir string
	// Names are the hosts monitored: "server" and "client", or with N
	// clients "server", "client1", ..., "clientN" (monitors/<label>/).
	Names   []string
	Mpstat  map[string]*parse.MpstatReport  // "server", "client"
	Pidstat map[string]*parse.PidstatReport // "server/csb-server", "client/connclient", ...
	Sadf    map[string]*parse.SadfReport    // "server", "client"
	// AllProcs is pidstat of every process (procs-pidstat.txt), per host;
	// LAB=local and netns record it on the client only (one kernel).
	AllProcs map[string]*parse.PidstatReport
	// CPUSets is each host's CPU set when the hosts were pinned (CPU_PIN,
	// run.env server.cpus and client.<k>.cpus), else empty: a pinned
	// host's CPU figures are over its own CPUs, not the machine's.
	CPUSets  map[string][]string
	Problems []string // files that were missing or unreadable
}

// Load reads the monitors of a run directory; a missing or broken file is
// noted in Problems and its metrics become null.
func Load(dir string) *Hosts {
	h := &Hosts{dir: dir, Mpstat: map[string]*parse.MpstatReport{}, Pidstat: map[string]*parse.PidstatReport{},
		Sadf: map[string]*parse.SadfReport{}, AllProcs: map[string]*parse.PidstatReport{}}
	h.Names = hostNames(dir)
	h.CPUSets = cpuSets(dir, h.Names)
	for _, host := range h.Names {
		nics := names(host, NICFigures{})
		p := filepath.Join(dir, "monitors", host, "sar.json")
		if f, err := rundir.Open(p); err == nil {
			r, err := parse.ParseSadf(f)
			f.Close()
			if err != nil {
				h.problem(p, err.Error(), nics)
			} else {
				h.Sadf[host] = r
			}
		} else if !os.IsNotExist(err) {
			h.problem(p, "unreadable: "+errors.Unwrap(err).Error(), nics)
		}
		p = filepath.Join(dir, "monitors", host, "mpstat.json")
		cpu := names(host, CPUFigures{})
		if f, err := rundir.Open(p); err == nil {
			r, err := parse.ParseMpstat(f)
			f.Close()
			if err != nil {
				h.problem(p, err.Error(), cpu)
			} else {
				h.Mpstat[host] = r
			}
		} else if os.IsNotExist(err) {
			h.problem(p, "missing", cpu)
		} else {
			h.problem(p, "unreadable: "+errors.Unwrap(err).Error(), cpu)
		}
		p = filepath.Join(dir, "monitors", host, "procs-pidstat.txt")
		if f, err := rundir.Open(p); err == nil {
			r, err := parse.ParsePidstatCPU(f)
			f.Close()
			if err != nil {
				h.problem(p, err.Error(), []string{"trust.other_load"})
			} else {
				h.AllProcs[host] = r
			}
		} else if !os.IsNotExist(err) {
			h.problem(p, "unreadable: "+errors.Unwrap(err).Error(), []string{"trust.other_load"})
		}
		// The run's own processes, by name; matched literally (a run
		// directory may hold '[' or '*', which Glob would take as a pattern).
		procs := names(host, ProcFigures{})
		files, err := rundir.Files(filepath.Join(dir, "monitors", host), "pidstat-", ".txt")
		if err != nil {
			h.problem(filepath.Join(dir, "monitors", host), "unreadable: "+err.Error(), procs)
		}
		for _, p := range files {
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "pidstat-"), ".txt")
			f, err := rundir.Open(p)
			if err != nil {
				h.problem(p, "unreadable: "+errors.Unwrap(err).Error(), procs)
				continue
			}
			r, err := parse.ParsePidstat(f)
			f.Close()
			if err != nil {
				h.problem(p, err.Error(), procs)
				continue
			}
			h.Pidstat[host+"/"+name] = r
		}
	}
	return h
}

// cpuSets reads run.env's pinning: nothing unless client.1.cpus is set
// (CPU_PIN on); then server.cpus for "server", client.1.cpus for "client"
// and client.<k>.cpus for "client<k>". A set that cannot be expanded is
// left out (its host's figures stay over every CPU).
func cpuSets(dir string, names []string) map[string][]string {
	out := map[string][]string{}
	env, err := kv.Read(filepath.Join(dir, "run.env"), "=")
	if err != nil || env["client.1.cpus"] == "" {
		return out
	}
	for _, host := range names {
		key := "server.cpus"
		switch {
		case host == "client":
			key = "client.1.cpus"
		case strings.HasPrefix(host, "client"):
			key = "client." + strings.TrimPrefix(host, "client") + ".cpus"
		}
		if set := clienthosts.ExpandCPUs(env[key]); len(set) > 0 {
			out[host] = set
		}
	}
	return out
}

// hostNames is "server", "client" for a one-client run; with N clients
// (monitors/client1/ exists) "server" and every monitors/client<k>/, in
// order of k.
func hostNames(dir string) []string {
	if st, err := os.Stat(filepath.Join(dir, "monitors", "client1")); err != nil || !st.IsDir() {
		return []string{"server", "client"}
	}
	names := []string{"server"}
	for k := 1; ; k++ {
		l := fmt.Sprintf("client%d", k)
		if st, err := os.Stat(filepath.Join(dir, "monitors", l)); err != nil || !st.IsDir() {
			return names
		}
		names = append(names, l)
	}
}

// names are the keys fig's figures get for host (server_cpu_pct, ...).
func names(host string, fig any) []string {
	out := summary.FigureNames(fig)
	for i, n := range out {
		out[i] = host + "_" + n
	}
	return out
}

// problem notes a monitor file that is missing or broken, on one line (a
// parser's message may quote raw bytes), with the metrics it leaves null.
func (h *Hosts) problem(p, what string, nulls []string) {
	line := rel(h.dir, p) + ": " + summary.OneLine(what, summary.MaxErrorLen)
	if len(nulls) > 0 {
		line += "; null because of it: " + strings.Join(nulls, ", ")
	}
	h.Problems = append(h.Problems, line)
}

func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return r
	}
	return p
}

// Window is the part of a cell whose one-second samples lie wholly inside
// it: sysstat stamps a sample at the end of its interval.
func Window(c rundir.Cell) parse.Window {
	return parse.Window{From: c.Start.Add(time.Second), To: c.End}
}

// CPUFigures is one host's CPU over a cell (mpstat): the mean busy % of
// all its CPUs (of its own CPU set when the hosts were pinned), and the
// busiest core's mean, which shows a single-threaded bound that the mean
// hides.
type CPUFigures struct {
	Pct        *float64 `json:"cpu_pct"`
	MaxCorePct *float64 `json:"cpu_max_core_pct"`
}

// CPU is every monitored host's CPU figures over the cell, by host name
// (server, client; with N clients client1, ...): server_cpu_pct,
// client_cpu_max_core_pct, ... as a prefixed map (summary.PutFigures).
func (h *Hosts) CPU(c rundir.Cell) map[string]CPUFigures {
	w := Window(c)
	out := map[string]CPUFigures{}
	for _, host := range h.Names {
		var f CPUFigures
		h.cpu(w, host, &f)
		out[host] = f
	}
	return out
}

func (h *Hosts) cpu(w parse.Window, host string, f *CPUFigures) {
	r := h.Mpstat[host]
	if r == nil {
		return
	}
	if set := h.CPUSets[host]; len(set) > 0 {
		// Pinned: the mean and the busiest core of its own CPUs.
		if per, err := r.MeanBusyPercentPerCPU(w); err == nil {
			sum, best, n := 0.0, math.NaN(), 0
			for _, cpu := range set {
				if v, ok := per[cpu]; ok {
					sum, n = sum+v, n+1
					if math.IsNaN(best) || v > best {
						best = v
					}
				}
			}
			if n == len(set) {
				f.Pct = summary.F(round(sum/float64(n), 1))
				f.MaxCorePct = summary.F(round(best, 1))
			}
		}
		return
	}
	if v, err := r.MeanBusyPercent(w, "all"); err == nil {
		f.Pct = summary.F(round(v, 1))
	}
	if per, err := r.MeanBusyPercentPerCPU(w); err == nil {
		best := math.NaN()
		for cpu, v := range per {
			if cpu != "all" && (math.IsNaN(best) || v > best) {
				best = v
			}
		}
		f.MaxCorePct = summary.F(round(best, 1))
	}
}

// NICFigures is what sar saw on one host's benchmark interface over a
// cell, in Mbit/s of frames as the kernel counts them (Ethernet header
// included) and packets per second: an independent check of what the
// tools report.
type NICFigures struct {
	RxMbps *float64 `json:"nic_rx_mbps"`
	TxMbps *float64 `json:"nic_tx_mbps"`
	RxPPS  *float64 `json:"nic_rx_pps"`
	TxPPS  *float64 `json:"nic_tx_pps"`
}

// NIC is every monitored host's NIC figures over the cell, by host name
// (server_nic_tx_mbps, client_nic_rx_mbps, ...); nics maps a host to its
// benchmark interface.
func (h *Hosts) NIC(c rundir.Cell, nics map[string]string) map[string]NICFigures {
	w := Window(c)
	out := map[string]NICFigures{}
	for _, host := range h.Names {
		var f NICFigures
		r, nic := h.Sadf[host], nics[host]
		if r != nil && nic != "" {
			for _, x := range []struct {
				p   **float64
				get func(parse.SadfNetDev) float64
			}{
				{&f.RxMbps, func(d parse.SadfNetDev) float64 { return d.RxKBPerS * 8 * 1024 / 1e6 }},
				{&f.TxMbps, func(d parse.SadfNetDev) float64 { return d.TxKBPerS * 8 * 1024 / 1e6 }},
				{&f.RxPPS, func(d parse.SadfNetDev) float64 { return d.RxPckPerS }},
				{&f.TxPPS, func(d parse.SadfNetDev) float64 { return d.TxPckPerS }},
			} {
				if v, err := r.MeanNetDev(w, nic, x.get); err == nil {
					*x.p = summary.F(round(v, 1))
				}
			}
		}
		out[host] = f
	}
	return out
}

// ProcFigures is a group of processes of one host over a cell, from its
// pidstat-<name>.txt: their summed %CPU (% of one CPU) and their largest
// summed RSS.
type ProcFigures struct {
	CPUPct *float64 `json:"proc_cpu_pct"`
	RSSMB  *float64 `json:"rss_mb"`
}

// Procs is the figures of the processes of pidstat-<name>.txt, key
// "<host>/<name>"; a phase puts them under a host name
// (summary.PutPrefixed: server_proc_cpu_pct, server_rss_mb).
func (h *Hosts) Procs(c rundir.Cell, key string) ProcFigures {
	var f ProcFigures
	r := h.Pidstat[key]
	if r == nil {
		return f
	}
	w := Window(c)
	if v, err := r.MeanCPUPercent(w); err == nil {
		f.CPUPct = summary.F(round(v, 1))
	}
	if maxKB, _, err := r.RSSKB(parse.Window{From: c.Start, To: c.End.Add(time.Second)}); err == nil {
		f.RSSMB = summary.F(round(float64(maxKB)/1024, 1))
	}
	return f
}

// PeakProcFigures is the busiest second of a group of processes over a
// cell (summed %CPU, % of one CPU). A short burst (a connect ramp) hides
// in the mean; not in the peak.
type PeakProcFigures struct {
	CPUPeakPct *float64 `json:"proc_cpu_peak_pct"`
}

// PeakProcs is the peak of the processes of pidstat-<name>.txt, key
// "<host>/<name>" (<host>_proc_cpu_peak_pct).
func (h *Hosts) PeakProcs(c rundir.Cell, key string) PeakProcFigures {
	var f PeakProcFigures
	r := h.Pidstat[key]
	if r == nil {
		return f
	}
	w := Window(c)
	sums := map[time.Time]float64{}
	for _, s := range r.Samples {
		if w.Contains(s.Time) {
			sums[s.Time] += s.CPUPercent
		}
	}
	if len(sums) == 0 {
		return f
	}
	best := 0.0
	for _, v := range sums {
		best = math.Max(best, v)
	}
	f.CPUPeakPct = summary.F(round(best, 1))
	return f
}

// PeakCPUFigures is mpstat's busiest second of all CPUs of a host (100 -
// idle, % of all CPUs) over a cell.
type PeakCPUFigures struct {
	Pct *float64 `json:"cpu_peak_pct"`
}

// PeakCPU is host's busiest second (<host>_cpu_peak_pct).
func (h *Hosts) PeakCPU(c rundir.Cell, host string) PeakCPUFigures {
	var f PeakCPUFigures
	r := h.Mpstat[host]
	if r == nil {
		return f
	}
	w := Window(c)
	best, ok := 0.0, false
	for _, s := range r.Samples {
		if a, found := s.CPU("all"); found && w.Contains(s.Time) {
			best, ok = math.Max(best, a.BusyPercent()), true
		}
	}
	if ok {
		f.Pct = summary.F(round(best, 1))
	}
	return f
}

// CounterFigures is one host's nstat deltas over a cell and its socket
// states after it (/proc/net/sockstat).
type CounterFigures struct {
	RetransSegs        *float64 `json:"retrans_segs"`
	ListenOverflows    *float64 `json:"listen_overflows"`
	ListenDrops        *float64 `json:"listen_drops"`
	EstabResets        *float64 `json:"estab_resets"`
	OutRsts            *float64 `json:"out_rsts"`
	AttemptFails       *float64 `json:"attempt_fails"`
	TCPTimeouts        *float64 `json:"tcp_timeouts"`
	AbortOnData        *float64 `json:"abort_on_data"`
	ActiveOpens        *float64 `json:"active_opens"`
	PassiveOpens       *float64 `json:"passive_opens"`
	SynRetrans         *float64 `json:"syn_retrans"`
	TCPMemoryPressures *float64 `json:"tcp_memory_pressures"`
	TimeWait           *float64 `json:"time_wait"` // sockstat TCP tw, after the cell
	TCPInuse           *float64 `json:"tcp_inuse"` // sockstat TCP inuse, after the cell
}

// nstat is each nstat counter with its figure.
func (f *CounterFigures) nstat() []struct {
	counter string
	p       **float64
} {
	return []struct {
		counter string
		p       **float64
	}{
		{"TcpRetransSegs", &f.RetransSegs},
		{"TcpExtListenOverflows", &f.ListenOverflows},
		{"TcpExtListenDrops", &f.ListenDrops},
		{"TcpEstabResets", &f.EstabResets},
		{"TcpOutRsts", &f.OutRsts},
		{"TcpAttemptFails", &f.AttemptFails},
		{"TcpExtTCPTimeouts", &f.TCPTimeouts},
		{"TcpExtTCPAbortOnData", &f.AbortOnData},
		{"TcpActiveOpens", &f.ActiveOpens},
		{"TcpPassiveOpens", &f.PassiveOpens},
		{"TcpExtTCPSynRetrans", &f.SynRetrans},
		{"TcpExtTCPMemoryPressures", &f.TCPMemoryPressures},
	}
}

// Counters is every monitored host's counters over the cell, by host name
// (server_retrans_segs, client_listen_overflows, server_time_wait, ...),
// and the problems reading them.
func (h *Hosts) Counters(c rundir.Cell) (map[string]CounterFigures, []string) {
	var problems []string
	out := map[string]CounterFigures{}
	for _, host := range h.Names {
		var f CounterFigures
		base := filepath.Join(h.dir, "monitors", host, "counters", c.Name)
		before, err1 := readNstat(base + ".before.nstat.json")
		after, err2 := readNstat(base + ".after.nstat.json")
		if err1 == nil && err2 == nil {
			// Only the counters reported: a 32-bit counter that wraps
			// during a cell (IpExtOutOctets does at 1 Gbit/s in ~34 s)
			// must not void the retransmits.
			counters := f.nstat()
			names := make([]string, len(counters))
			for i, x := range counters {
				names[i] = x.counter
			}
			d, err := parse.NstatDelta(before, after, names...)
			if err != nil {
				problems = append(problems, err.Error())
			}
			for _, x := range counters {
				if v, ok := d[x.counter]; ok {
					*x.p = summary.F(float64(v))
				}
			}
		}
		if ss, err := ReadSockstat(base + ".after.sockstat"); err == nil {
			if v, ok := ss["TCP.tw"]; ok {
				f.TimeWait = summary.F(v)
			}
			if v, ok := ss["TCP.inuse"]; ok {
				f.TCPInuse = summary.F(v)
			}
		}
		out[host] = f
	}
	return out, problems
}

func readNstat(p string) (parse.Nstat, error) {
	f, err := rundir.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parse.ParseNstat(f)
}

// ReadSockstat reads /proc/net/sockstat ("TCP: inuse 5 orphan 0 tw 2 alloc
// 7 mem 1") into "TCP.inuse"=5, "TCP.tw"=2, ...
func ReadSockstat(p string) (map[string]float64, error) {
	f, err := rundir.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		proto, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		for i := 0; i+1 < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i+1], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", p, fields[i+1])
			}
			out[proto+"."+fields[i]] = v
		}
	}
	return out, sc.Err()
}

var round = decimal.Round
