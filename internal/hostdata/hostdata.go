// Package hostdata turns the monitors both hosts recorded during a run into
// per-cell metrics: CPU of each host (mpstat), CPU and RSS of the server
// processes (pidstat), network counters (nstat deltas) and socket states
// (/proc/net/sockstat) after the cell. Every phase uses it the same way.
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
		nics := []string{host + "_nic_rx_mbps", host + "_nic_tx_mbps", host + "_nic_rx_pps", host + "_nic_tx_pps"}
		p := filepath.Join(dir, "monitors", host, "sar.json")
		if f, err := os.Open(p); err == nil {
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
		cpu := []string{host + "_cpu_pct", host + "_cpu_max_core_pct"}
		if f, err := os.Open(p); err == nil {
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
		if f, err := os.Open(p); err == nil {
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
		procs := []string{host + "_proc_cpu_pct", host + "_rss_mb"}
		files, err := rundir.Files(filepath.Join(dir, "monitors", host), "pidstat-", ".txt")
		if err != nil {
			h.problem(filepath.Join(dir, "monitors", host), "unreadable: "+err.Error(), procs)
		}
		for _, p := range files {
			name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "pidstat-"), ".txt")
			f, err := os.Open(p)
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

// CPU adds server_cpu_pct and client_cpu_pct (with N clients
// client1_cpu_pct, ...: one per monitored host; mean busy % of all CPUs of
// that host, mpstat; of its own CPU set when the hosts were pinned) and per-CPU maxima (…_cpu_max_core_pct: the busiest
// core's mean, which shows a single-threaded bound that the mean hides).
func (h *Hosts) CPU(c rundir.Cell, m map[string]*float64) {
	w := Window(c)
	for _, host := range h.Names {
		m[host+"_cpu_pct"] = nil
		m[host+"_cpu_max_core_pct"] = nil
		r := h.Mpstat[host]
		if r == nil {
			continue
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
					m[host+"_cpu_pct"] = summary.F(round(sum/float64(n), 1))
					m[host+"_cpu_max_core_pct"] = summary.F(round(best, 1))
				}
			}
			continue
		}
		if v, err := r.MeanBusyPercent(w, "all"); err == nil {
			m[host+"_cpu_pct"] = summary.F(round(v, 1))
		}
		if per, err := r.MeanBusyPercentPerCPU(w); err == nil {
			best := math.NaN()
			for cpu, v := range per {
				if cpu != "all" && (math.IsNaN(best) || v > best) {
					best = v
				}
			}
			m[host+"_cpu_max_core_pct"] = summary.F(round(best, 1))
		}
	}
}

// NIC adds what sar saw on each host's benchmark interface over the cell:
// server_nic_tx_mbps and client_nic_rx_mbps (and the other direction), in
// Mbit/s of frames as the kernel counts them (Ethernet header included), and
// packets per second. An independent check of what the tools report.
func (h *Hosts) NIC(c rundir.Cell, nics map[string]string, m map[string]*float64) {
	w := Window(c)
	for _, host := range h.Names {
		for _, k := range []string{"_nic_rx_mbps", "_nic_tx_mbps", "_nic_rx_pps", "_nic_tx_pps"} {
			m[host+k] = nil
		}
		r, nic := h.Sadf[host], nics[host]
		if r == nil || nic == "" {
			continue
		}
		for k, f := range map[string]func(parse.SadfNetDev) float64{
			"_nic_rx_mbps": func(d parse.SadfNetDev) float64 { return d.RxKBPerS * 8 * 1024 / 1e6 },
			"_nic_tx_mbps": func(d parse.SadfNetDev) float64 { return d.TxKBPerS * 8 * 1024 / 1e6 },
			"_nic_rx_pps":  func(d parse.SadfNetDev) float64 { return d.RxPckPerS },
			"_nic_tx_pps":  func(d parse.SadfNetDev) float64 { return d.TxPckPerS },
		} {
			if v, err := r.MeanNetDev(w, nic, f); err == nil {
				m[host+k] = summary.F(round(v, 1))
			}
		}
	}
}

// Procs adds <prefix>_proc_cpu_pct (the processes' summed %CPU, in % of one
// CPU) and <prefix>_rss_mb (largest summed RSS) from pidstat-<name>.txt.
func (h *Hosts) Procs(c rundir.Cell, key, prefix string, m map[string]*float64) {
	m[prefix+"_proc_cpu_pct"] = nil
	m[prefix+"_rss_mb"] = nil
	r := h.Pidstat[key]
	if r == nil {
		return
	}
	w := Window(c)
	if v, err := r.MeanCPUPercent(w); err == nil {
		m[prefix+"_proc_cpu_pct"] = summary.F(round(v, 1))
	}
	if maxKB, _, err := r.RSSKB(parse.Window{From: c.Start, To: c.End.Add(time.Second)}); err == nil {
		m[prefix+"_rss_mb"] = summary.F(round(float64(maxKB)/1024, 1))
	}
}

// PeakProcs adds <prefix>_proc_cpu_peak_pct: the busiest second of the
// processes of pidstat-<name>.txt over the cell (summed %CPU, % of one
// CPU). A short burst (a connect ramp) hides in the mean; not in the peak.
func (h *Hosts) PeakProcs(c rundir.Cell, key, prefix string, m map[string]*float64) {
	m[prefix+"_proc_cpu_peak_pct"] = nil
	r := h.Pidstat[key]
	if r == nil {
		return
	}
	w := Window(c)
	sums := map[time.Time]float64{}
	for _, s := range r.Samples {
		if w.Contains(s.Time) {
			sums[s.Time] += s.CPUPercent
		}
	}
	if len(sums) == 0 {
		return
	}
	best := 0.0
	for _, v := range sums {
		best = math.Max(best, v)
	}
	m[prefix+"_proc_cpu_peak_pct"] = summary.F(round(best, 1))
}

// PeakCPU adds <host>_cpu_peak_pct: mpstat's busiest second of all CPUs
// (100 - idle, % of all CPUs) over the cell.
func (h *Hosts) PeakCPU(c rundir.Cell, host string, m map[string]*float64) {
	m[host+"_cpu_peak_pct"] = nil
	r := h.Mpstat[host]
	if r == nil {
		return
	}
	w := Window(c)
	best, ok := 0.0, false
	for _, s := range r.Samples {
		if a, found := s.CPU("all"); found && w.Contains(s.Time) {
			best, ok = math.Max(best, a.BusyPercent()), true
		}
	}
	if ok {
		m[host+"_cpu_peak_pct"] = summary.F(round(best, 1))
	}
}

// counterMetrics maps nstat counters to the metric names reports use.
var counterMetrics = []struct{ counter, metric string }{
	{"TcpRetransSegs", "retrans_segs"},
	{"TcpExtListenOverflows", "listen_overflows"},
	{"TcpExtListenDrops", "listen_drops"},
	{"TcpEstabResets", "estab_resets"},
	{"TcpOutRsts", "out_rsts"},
	{"TcpAttemptFails", "attempt_fails"},
	{"TcpExtTCPTimeouts", "tcp_timeouts"},
	{"TcpExtTCPAbortOnData", "abort_on_data"},
	{"TcpActiveOpens", "active_opens"},
	{"TcpPassiveOpens", "passive_opens"},
	{"TcpExtTCPSynRetrans", "syn_retrans"},
	{"TcpExtTCPMemoryPressures", "tcp_memory_pressures"},
}

// Counters adds, for each host, the nstat deltas over the cell
// (server_retrans_segs, client_listen_overflows, …) and the socket states
// after it (server_time_wait, client_tcp_inuse).
func (h *Hosts) Counters(c rundir.Cell, m map[string]*float64) []string {
	var problems []string
	for _, host := range h.Names {
		base := filepath.Join(h.dir, "monitors", host, "counters", c.Name)
		for _, cm := range counterMetrics {
			m[host+"_"+cm.metric] = nil
		}
		before, err1 := readNstat(base + ".before.nstat.json")
		after, err2 := readNstat(base + ".after.nstat.json")
		if err1 == nil && err2 == nil {
			// Only the counters reported: a 32-bit counter that wraps
			// during a cell (IpExtOutOctets does at 1 Gbit/s in ~34 s)
			// must not void the retransmits.
			names := make([]string, len(counterMetrics))
			for i, cm := range counterMetrics {
				names[i] = cm.counter
			}
			d, err := parse.NstatDelta(before, after, names...)
			if err != nil {
				problems = append(problems, err.Error())
			}
			for _, cm := range counterMetrics {
				if v, ok := d[cm.counter]; ok {
					m[host+"_"+cm.metric] = summary.F(float64(v))
				}
			}
		}
		m[host+"_time_wait"], m[host+"_tcp_inuse"] = nil, nil
		if ss, err := ReadSockstat(base + ".after.sockstat"); err == nil {
			if v, ok := ss["TCP.tw"]; ok {
				m[host+"_time_wait"] = summary.F(v)
			}
			if v, ok := ss["TCP.inuse"]; ok {
				m[host+"_tcp_inuse"] = summary.F(v)
			}
		}
	}
	return problems
}

func readNstat(p string) (parse.Nstat, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parse.ParseNstat(f)
}

// ReadSockstat reads /proc/net/sockstat ("TCP: inuse 5 orphan 0 tw 2 alloc
// 7 mem 1") into "TCP.inuse"=5, "TCP.tw"=2, ...
func ReadSockstat(p string) (map[string]float64, error) {
	f, err := os.Open(p)
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
