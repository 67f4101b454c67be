// Package summary is the summary.json contract every phase shares, and its
// CSV form. Metric names carry their unit; a value that was not measured is
// null (a nil pointer), never 0.
package summary

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"csbench/internal/atomicfile"
	"csbench/internal/clienthosts"
	"csbench/internal/parse"
	"csbench/internal/rundir"
)

// SchemaVersion is summary.json's major version, bumped on any incompatible
// change to Summary. Load refuses a file of another one. 2: every cell's
// verdict carries its code, which readers decide on (a file of version 1
// has none: a reader would take every verdict for none of its codes).
const SchemaVersion = 2

// The codes of NoteCodes.
const (
	// NoteWrkForOha: oha was asked for (LOADGEN=auto) and not installed,
	// so wrk stood in for it in every cell (Phase 2).
	NoteWrkForOha = "wrk_for_oha"
)

// HasNote reports whether the run carries the note code.
func (s *Summary) HasNote(code string) bool {
	for _, c := range s.NoteCodes {
		if c == code {
			return true
		}
	}
	return false
}

// VersionError is a summary.json whose schema_version this csb does not read.
type VersionError struct {
	Path string
	Got  int // 0: the file has no schema_version
}

func (e *VersionError) Error() string {
	if e.Got == 0 {
		return fmt.Sprintf("%s has no schema_version: not a summary.json bin/csb wrote (this csb reads schema_version %d)", e.Path, SchemaVersion)
	}
	return fmt.Sprintf("%s has schema_version %d; this csb reads schema_version %d: regenerate it with this csb (bin/csb summarize <run directory>) or read it with the csb that wrote it",
		e.Path, e.Got, SchemaVersion)
}

// Summary is summary.json.
type Summary struct {
	SchemaVersion int      `json:"schema_version"`
	GeneratedBy   string   `json:"generated_by"`
	Phase         string   `json:"phase"`
	RunID         string   `json:"run_id"`
	StartedAt     string   `json:"started_at"`
	FinishedAt    *string  `json:"finished_at"`
	Status        string   `json:"status"`
	Error         *string  `json:"error"`
	Lab           string   `json:"lab"`
	Profile       string   `json:"profile"`
	Notes         []string `json:"notes"`
	// NoteCodes are the notes a reader decides on, as codes from a closed
	// list (NoteWrkForOha); Notes has their words, for people.
	NoteCodes []string          `json:"note_codes,omitempty"`
	Runner    string            `json:"runner"`
	Argv      string            `json:"argv"`
	Git       Git               `json:"git"`
	Settings  map[string]string `json:"settings"`
	Link      Link              `json:"link"`
	Server    *Server           `json:"server,omitempty"` // HTTP phases only
	TLS       *TLS              `json:"tls,omitempty"`    // HTTP phases, runs that recorded SCHEME
	HTTP      *HTTP             `json:"http,omitempty"`   // HTTP phases, runs that loaded over HTTP/2
	Hosts     map[string]Host   `json:"hosts"`
	// Clients is set for a run with several client hosts (run.env
	// clients >= 2) and absent for one client: its table is the run's.
	Clients *Clients `json:"clients,omitempty"`
	// set is the run's client hosts, one or more (ClientSet).
	set *clienthosts.Set
	// Pin is set when the hosts were pinned to CPU sets of their own.
	Pin   *Pin   `json:"cpu_pin,omitempty"`
	Cells []Cell `json:"cells"`
	// Capacity is Phase 5's result per payload (absent in other phases).
	Capacity []Capacity `json:"capacity,omitempty"`
	// Faults are what the phase found that makes the run not ok whatever
	// its cells say (Decide reads them); absent when none.
	Faults []Fault `json:"faults,omitempty"`
}

// Capacity is one payload's search (Phase 5): the highest offered rate
// that kept the SLO, the bracket around it, what bounded it; with the
// ground-truth server its true capacity (slots / the hold it measured).
type Capacity struct {
	Payload       string   `json:"payload"`
	Done          bool     `json:"done"`
	Steps         int      `json:"steps"`
	SLOPercentile float64  `json:"slo_percentile"`
	SLOLatencyMs  float64  `json:"slo_latency_ms"`
	SLOErrorsPct  float64  `json:"slo_errors_pct"`
	CapacityRPS   *float64 `json:"capacity_rps"`
	LowRPS        *float64 `json:"capacity_bracket_low_rps"`
	HighRPS       *float64 `json:"capacity_bracket_high_rps"`
	// Bound is a code: latency, errors, achieved, queue, unreadable (the
	// SLO term the step above the capacity broke), client_bound,
	// max_steps, max_time, never_met, cut_short.
	Bound string `json:"bound"`
	// QueueGrowthMaxMsPerS is the latency growth over a step's schedule
	// above which it fails with queue (capacity.QueueGrowthMaxMsPerS).
	QueueGrowthMaxMsPerS *float64 `json:"queue_growth_max_ms_per_s,omitempty"`
	Says                 string   `json:"text"`
	// Cause is what the failing step above the capacity ran out of, a
	// code: server_cpu, link, slots (the ground-truth server), errors,
	// client, nginx_cork (nginx's tcp_nopush holding a few answers' last
	// segments, not load), unexplained ("" when none failed above it);
	// CauseEvidence the host counters that say so.
	Cause         string `json:"cause,omitempty"`
	CauseEvidence string `json:"cause_evidence,omitempty"`
	// LittleInFlight is the capacity × the median latency from the due
	// time of the last step at the capacity: about the requests in flight
	// there (Little's law, the median for the mean).
	LittleInFlight *float64 `json:"littles_law_in_flight,omitempty"`
	// StartRPS is the first step's rate; Phase2MaxRPS, when the search
	// started from it, the closed-loop maximum at this payload of the
	// Phase 2 run Phase2Run (its directory's name), of the same lab,
	// server and scheme.
	StartRPS     *float64 `json:"start_rps,omitempty"`
	Phase2MaxRPS *float64 `json:"phase2_max_rps,omitempty"`
	Phase2Run    string   `json:"phase2_run,omitempty"`
	// ProbeRPS, when no Phase 2 run was there to start from: what the
	// probe step (<size>-probe, every connection kept busy) achieved.
	ProbeRPS *float64 `json:"probe_rps,omitempty"`

	TruthRPS        *float64 `json:"truth_capacity_rps,omitempty"`
	TruthHoldMeanMs *float64 `json:"truth_hold_mean_ms,omitempty"`
	// TruthBasis is whose holds: capacity_steps (the server's /stats around
	// the steps at the capacity's rate) or run (its shutdown line).
	TruthBasis    string   `json:"truth_basis,omitempty"`
	TruthErrorPct *float64 `json:"capacity_vs_truth_pct,omitempty"`
	// BoundDisturbed names the failing steps at the bracket's high rate
	// whose cells are marked disturbed (trust marks: others' CPU or steal
	// on a host): the failure may be theirs, and the capacity is then a
	// lower bound only (noise slows a server; it never speeds one up).
	BoundDisturbed []string `json:"bound_disturbed_steps,omitempty"`
}

// Clients is the client hosts of an N-client run, from run.env.
type Clients struct {
	N     int          `json:"n"`
	Hosts []ClientHost `json:"hosts"`
	// ServerCPUs is the server host's cpuset ("" = all CPUs).
	ServerCPUs   string   `json:"server_cpus"`
	ClockBoundMs *float64 `json:"clock_bound_ms"`
}

// ClientHost is one client host: its label (client<k>, the name of its
// monitors/, env/ and raw/ directories), where it ran and on which CPUs.
type ClientHost struct {
	Label string   `json:"label"`
	SSH   string   `json:"ssh"`
	Addrs []string `json:"addrs"`
	NIC   string   `json:"nic"`
	CPUs  string   `json:"cpus"` // cpuset, "" = all
	// ClockOffsetMs is the host's clock minus the controller's.
	ClockOffsetMs *float64 `json:"clock_offset_ms"`
}

// Pin is the CPUs the hosts' processes were pinned to (CPU_PIN: in the
// netns lab the server host on one CPU set, the client hosts on the rest),
// from run.env's server.cpus and client.1.cpus; nil when unpinned.
type Pin struct {
	Server string `json:"server_cpus"`
	Client string `json:"client_cpus"`
}

// SharedCPUs reports whether server and client ran on the same CPUs: the
// local lab always; the netns lab (one machine) unless its hosts were
// pinned to CPU sets of their own.
func (s *Summary) SharedCPUs() bool { return SharedCPUs(s.Lab, s.Pin != nil) }

// SharedCPUs is the rule of Summary.SharedCPUs for a lab whose hosts were
// pinned or not (run.env: server.cpus and client.1.cpus both set).
func SharedCPUs(lab string, pinned bool) bool {
	switch lab {
	case "local":
		return true
	case "netns":
		return !pinned
	}
	return false
}

// RunSharedCPUs is SharedCPUs of a run as its run.env recorded it.
func RunSharedCPUs(r *rundir.Run) bool {
	return SharedCPUs(r.Get("lab"), r.Get("client.1.cpus") != "" && r.Get("server.cpus") != "")
}

// ClientSet is the run's client hosts, one or more: as run.env recorded
// them, or for a summary read back from its file, its table (one host
// "client" when it has none).
func (s *Summary) ClientSet() *clienthosts.Set {
	switch {
	case s.set != nil:
		return s.set
	case s.Clients != nil:
		return s.Clients.Set()
	}
	return clienthosts.One()
}

// ClientsFrom converts the run's client set: the table summary.json
// carries, only for several client hosts (nil for one).
func ClientsFrom(set *clienthosts.Set) *Clients {
	if set == nil || set.N() < 2 {
		return nil
	}
	out := &Clients{N: set.N(), ServerCPUs: set.ServerCPUs, ClockBoundMs: set.ClockBoundMs}
	for _, c := range set.Clients {
		out.Hosts = append(out.Hosts, ClientHost{Label: c.Label, SSH: c.SSH, Addrs: c.Addrs, NIC: c.NIC, CPUs: c.CPUs, ClockOffsetMs: c.ClockOffsetMs})
	}
	return out
}

// Set converts back to the clients package's form.
func (c *Clients) Set() *clienthosts.Set {
	if c == nil {
		return nil
	}
	set := &clienthosts.Set{ServerCPUs: c.ServerCPUs, ClockBoundMs: c.ClockBoundMs}
	for i, h := range c.Hosts {
		set.Clients = append(set.Clients, clienthosts.Client{K: i + 1, Label: h.Label, SSH: h.SSH, Addrs: h.Addrs, NIC: h.NIC, CPUs: h.CPUs, ClockOffsetMs: h.ClockOffsetMs})
	}
	return set
}

// Git is the commit the run was made from.
type Git struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// Link is what the run compares throughput against.
type Link struct {
	Rate            string   `json:"rate"`
	RateMbps        *float64 `json:"rate_mbps"`
	TCPCeilingMbps  *float64 `json:"tcp_ceiling_mbps"`
	CeilingBasis    string   `json:"ceiling_basis"`
	BaselineMbps    *float64 `json:"baseline_mbps"`
	BaselineRun     string   `json:"baseline_run"`
	BaselineComment string   `json:"baseline_comment,omitempty"`
}

// Server is the server under test: the SERVER setting and what the runner
// recorded about it (run.env server.*). Runs made before SERVER existed ran
// the reference server.
type Server struct {
	Kind    string `json:"kind"`    // csb, nginx, cmd or url
	Version string `json:"version"` // as the server or its package reports it; "" when unknown
	Command string `json:"command"` // the command line it runs with ("" when unknown)
	Workers string `json:"workers"` // worker or process count ("" when unknown)
	CPUs    string `json:"cpus"`    // SERVER_CPUS, the CPUs it was pinned to ("" = all)
	// Managed is false for SERVER=url: its life was not the runner's.
	Managed bool `json:"managed"`
	// ConnectionClose: it answered "Connection: close" to the checks.
	ConnectionClose bool   `json:"connection_close"`
	Nginx           string `json:"nginx,omitempty"` // the nginx settings written into its config
}

// TCPNopush is an nginx server's tcp_nopush, "on" or "off", and "" for
// another server. A run recorded before NGINX_TCP_NOPUSH existed had it
// on: the generated configuration's, as Debian ships nginx.
func (s Server) TCPNopush() string {
	if s.Kind != "nginx" {
		return ""
	}
	for _, kv := range strings.Fields(s.Nginx) {
		if v, ok := strings.CutPrefix(kv, "tcp_nopush="); ok {
			return v
		}
	}
	return "on"
}

// ServerFor reads the server under test from a run.
func ServerFor(r *rundir.Run) Server {
	sv := Server{
		Kind: r.Get("server.kind"), Version: r.Get("server.version"), Command: r.Get("server.cmdline"),
		Workers: r.Get("server.workers"), CPUs: r.Get("server.cpus"), Managed: r.Get("server.managed") != "0",
		ConnectionClose: r.Get("server.connection_close") == "1", Nginx: r.Get("server.nginx"),
	}
	if sv.Kind == "" {
		sv.Kind = r.Settings["SERVER"]
	}
	if sv.Kind == "" {
		sv.Kind = "csb"
	}
	return sv
}

// httpPhase: a phase with a server under test (runs from before SERVER
// recorded server.kind in run.env).
func httpPhase(phase string) bool {
	for _, p := range []string{"01-", "02-", "03-"} {
		if strings.HasPrefix(phase, p) {
			return true
		}
	}
	return false
}

// Label names the server under test in a few words: "csb", "nginx 1.22.1",
// "cmd myserver".
func (sv Server) Label() string {
	switch sv.Kind {
	case "nginx":
		if i := strings.Index(sv.Version, "nginx/"); i >= 0 {
			v := strings.Fields(sv.Version[i+len("nginx/"):])
			if len(v) > 0 {
				return "nginx " + strings.TrimSuffix(v[0], ";")
			}
		}
		return "nginx"
	case "cmd", "url":
		if f := strings.Fields(sv.Command); len(f) > 0 {
			return sv.Kind + " " + filepath.Base(f[0])
		}
	}
	return sv.Kind
}

// Host holds one host's facts from its environment capture.
type Host struct {
	Hostname    string            `json:"hostname"`
	Kernel      string            `json:"kernel"`
	OS          string            `json:"os"`
	CPUModel    string            `json:"cpu_model"`
	CPUs        *float64          `json:"cpus"`
	MemTotalMB  *float64          `json:"mem_total_mb"`
	UlimitNSoft string            `json:"ulimit_n_soft"`
	UlimitNHard string            `json:"ulimit_n_hard"`
	NIC         string            `json:"nic"`
	NICMTU      *float64          `json:"nic_mtu"`
	NICSpeed    *float64          `json:"nic_speed_mbps"`
	NICDriver   string            `json:"nic_driver"`
	Sysctls     map[string]string `json:"sysctls"`
	Tools       map[string]string `json:"tools"`
}

// Cell is one measured cell.
type Cell struct {
	Name    string              `json:"name"`
	Params  map[string]string   `json:"params"`
	Metrics map[string]*float64 `json:"metrics"`
	Details map[string]any      `json:"details,omitempty"`
	Status  string              `json:"status"`
	Error   *string             `json:"error"`
	Verdict *Verdict            `json:"verdict,omitempty"`
	// Trust says how far the cell's figures can be trusted: whether
	// anything else took CPU during it (disturbed), whether its throughput
	// held steady (unsteady). Filled by internal/trust; nil when not judged.
	Trust     *Trust `json:"trust,omitempty"`
	StartedAt string `json:"started_at"`
	EndedAt   string `json:"ended_at"`
	// Clients are the per-client figures of a cell run from several
	// client hosts (absent with one); Overlap the window in which every
	// client was loading; LatencyMerge how the cell's latency figures
	// were combined: LatencyMergeExact or LatencyMergeNone.
	Clients      []ClientCell `json:"clients,omitempty"`
	Overlap      *Overlap     `json:"overlap,omitempty"`
	LatencyMerge string       `json:"latency_merge,omitempty"`
	// Unparsed is the raw file (relative to the run directory) that is
	// missing, unreadable or malformed, set by SetRawError; csb summarize
	// then marks the run partial. Not part of summary.json: the cell's
	// error says it.
	Unparsed string `json:"-"`
}

// How an N-client cell's latency figures were combined.
const (
	// LatencyMergeExact: from the merge of every client's full
	// distribution (wrk's CSB_WRK_DIST lines): the run's own figures.
	LatencyMergeExact = "exact"
	// LatencyMergeNone: some client's output carries no full
	// distribution (oha's JSON, a wrk hook older than the line): only the
	// maximum is exact, no percentile is given for the cell.
	LatencyMergeNone = "not-mergeable"
)

// ClientCell is one client's share of a cell: its figures over its own
// run, with the same metric names as the cell's (rps, throughput_mbps,
// latency_p99_ms, loadgen_cpu_pct, ...).
type ClientCell struct {
	Label       string              `json:"label"`
	Connections *float64            `json:"connections"`
	Metrics     map[string]*float64 `json:"metrics"`
	// StartMs and EndMs are its run on the controller's clock (its own
	// timing less its clock offset); nil without a timing file.
	StartMs *float64 `json:"start_ms"`
	EndMs   *float64 `json:"end_ms"`
	// StartLagMs is how long after the agreed moment (due_ms) the tool
	// started, on the client's own clock; nil without a timing file.
	StartLagMs *float64 `json:"start_lag_ms"`
	// CPUBound is true when this client's load generator or host was
	// saturated (httpphase.CPUSaturated), with the evidence.
	CPUBound         bool   `json:"cpu_bound"`
	CPUBoundEvidence string `json:"cpu_bound_evidence,omitempty"`
}

// Overlap is the window in which every client of a cell was loading, on
// the controller's clock: [latest start + warm-up, earliest end].
type Overlap struct {
	FromMs        float64 `json:"from_ms"`
	ToMs          float64 `json:"to_ms"`
	S             float64 `json:"s"`
	StartSpreadMs float64 `json:"start_spread_ms"`
	EndSpreadMs   float64 `json:"end_spread_ms"`
	WarmupS       float64 `json:"warmup_s"`
}

// Trust is a cell's marks (internal/trust computes them).
type Trust struct {
	// Disturbed is true when, on some host, processes other than the
	// run's (and steal) took more than DisturbCPUPct of one core.
	Disturbed bool `json:"disturbed"`
	// DisturbThresholdPct is DISTURB_THRESHOLD, in % of one core.
	DisturbThresholdPct float64 `json:"disturb_threshold_pct"`
	// OtherLoad is what ran besides the run, per host ("server", "client",
	// or "machine" when both share one kernel: LAB=local, netns).
	OtherLoad []OtherLoad `json:"other_load"`
	// Unsteady is true when the per-second throughput varied more than
	// the threshold, or trended, over the measured window.
	Unsteady bool `json:"unsteady"`
	// Steadiness is the evidence of Unsteady; nil when not judged.
	Steadiness *Steadiness `json:"steadiness,omitempty"`
}

// OtherLoad is one host's CPU during a cell, apart from the run's
// processes. CPU figures are means over the cell in % of ONE core.
type OtherLoad struct {
	Host string `json:"host"`
	CPUs int    `json:"cpus"`
	// OthersCPUPct is the figure the threshold applies to: every other
	// process's CPU (pidstat of all processes) plus steal (mpstat).
	OthersCPUPct *float64 `json:"others_cpu_pct"`
	StealCPUPct  *float64 `json:"steal_cpu_pct"`
	// RunCPUPct is the run's own processes (their pidstat files), the
	// sysstat monitors and kernel threads apart.
	RunCPUPct *float64 `json:"run_cpu_pct"`
	// KernelThreadsCPUPct is ksoftirqd, kworker and the like: the
	// network work the run itself causes, counted in neither.
	KernelThreadsCPUPct *float64 `json:"kernel_threads_cpu_pct"`
	// HostBusyCPUPct is mpstat's busy time of all CPUs (100 - idle -
	// iowait), as % of one core: the total the others are part of.
	HostBusyCPUPct *float64 `json:"host_busy_cpu_pct"`
	// RunQueueMean and RunQueueMax are sar -q's runq-sz (tasks running
	// or waiting for a CPU) over the cell: the kernel's view of load.
	RunQueueMean *float64    `json:"run_queue_mean"`
	RunQueueMax  *float64    `json:"run_queue_max"`
	Top          []OtherProc `json:"top"`
}

// OtherProc is one process that was not the run's, by mean CPU over the
// cell (% of one core).
type OtherProc struct {
	PID     int     `json:"pid"`
	Command string  `json:"command"`
	CPUPct  float64 `json:"cpu_pct"`
}

// Steadiness is a cell's per-second throughput over its measured window.
type Steadiness struct {
	Source  string    `json:"source"` // e.g. "sar: server eth0 tx"
	WarmupS int       `json:"warmup_s"`
	Mbps    []float64 `json:"mbps"` // per second, after warm-up
	// ToolMbps is the tool's own per-second figure where it gives one
	// (iperf3's intervals, omitted ones left out); nil otherwise.
	ToolMbps     []float64 `json:"tool_mbps,omitempty"`
	ToolSource   string    `json:"tool_source,omitempty"`
	MeanMbps     float64   `json:"mean_mbps"`
	CVPct        float64   `json:"cv_pct"`
	SlopePctPerS float64   `json:"slope_pct_per_s"` // trend, % of the mean per second
	TrendT       float64   `json:"trend_t"`         // t statistic of the slope
	CVThreshold  float64   `json:"cv_threshold_pct"`
	// Judged is false when the series was too short (or empty) to judge.
	Judged bool `json:"judged"`
	// Cause is why the cell is unsteady: "variation" (CV above the
	// threshold) or "trend" (a significant slope); "" when steady.
	Cause string `json:"cause"`
	// Reason says it in words, or why the cell was not judged.
	Reason string `json:"reason,omitempty"`
}

// MaxErrorLen is the longest cell error SetUnparsed writes, in bytes.
const MaxErrorLen = 200

// SetRawError fails c because of err from reading its raw file path (under
// the run directory dir). The error is one line: the file, then what was
// wrong, without control characters or non-ASCII bytes (a parser's message
// may quote the raw bytes it choked on), cut at MaxErrorLen. When the file
// is missing, unreadable or malformed (Malformed), c.Unparsed names it; a
// well-formed file in which the tool reported its own failure is only a
// failed cell.
func (c *Cell) SetRawError(dir, path string, err error) {
	rel := path
	if r, e := filepath.Rel(dir, path); e == nil && !strings.HasPrefix(r, "..") {
		rel = r
	}
	msg := OneLine(rel+": "+strings.ReplaceAll(err.Error(), path, rel), MaxErrorLen)
	c.Status = "failed"
	c.Error = &msg
	if Malformed(err) {
		c.Unparsed = rel
	}
}

// Malformed reports whether err means a raw file could not be read or is
// not well-formed JSON: missing, unreadable, empty, cut short, a syntax or
// type error, or a value below zero where the tool never prints one
// (parse.ErrImpossible).
func Malformed(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var pe *fs.PathError
	return errors.As(err, &syn) || errors.As(err, &typ) || errors.As(err, &pe) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, parse.ErrImpossible)
}

// OneLine makes s one printable ASCII line of at most max bytes: control
// and non-ASCII characters become '?', runs of spaces one space, and a cut
// is marked with "...".
func OneLine(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		case r < 0x20 || r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
		space = false
	}
	out := strings.TrimSpace(b.String())
	if len(out) > max {
		out = out[:max-3] + "..."
	}
	return out
}

// Verdict says which resource bound a cell, with the evidence.
//
// Code is what a reader decides on: one of the closed list of the cell's
// phase (docs/verdicts.md; the phase's Code* or Bound* constants). Cause
// and Qualifiers, codes too, say what the code alone does not (the errno
// most connections were lost to; a CPU that was saturated, a split across
// processes, a ramp that backed off). Bound and Evidence are the same
// verdict in words, for people: reports print them, no code reads them.
type Verdict struct {
	Code       string   `json:"code"`
	Cause      string   `json:"cause,omitempty"`
	Qualifiers []string `json:"qualifiers,omitempty"`
	Bound      string   `json:"bound"`
	Evidence   string   `json:"evidence"`
}

// Has reports whether the verdict carries the qualifier q.
func (v *Verdict) Has(q string) bool {
	for _, x := range v.Qualifiers {
		if x == q {
			return true
		}
	}
	return false
}

// F returns a pointer to v, or nil when v is NaN (not measured).
func F(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Val returns *p or NaN.
func Val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func num(s string) *float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil
	}
	return &v
}

// New fills the run-level fields shared by every phase.
func New(r *rundir.Run, generatedBy string) *Summary {
	s := &Summary{
		SchemaVersion: SchemaVersion,
		GeneratedBy:   generatedBy,
		Phase:         r.Get("phase"),
		RunID:         r.Get("run_id"),
		StartedAt:     r.Get("started_at"),
		FinishedAt:    strp(r.Get("finished_at")),
		Lab:           r.Get("lab"),
		Profile:       r.Settings["PROFILE"],
		Notes:         []string{},
		Runner:        r.Get("runner"),
		Argv:          r.Get("argv"),
		Git:           Git{Commit: r.Get("git_commit"), Dirty: r.Get("git_dirty") == "true"},
		Settings:      r.Settings,
		Hosts:         map[string]Host{},
		Cells:         []Cell{},
	}
	// The status so far is the runner's own end; csb summarize decides the
	// run's once the cells are summarized (Decide).
	runnerStatus(r).Apply(s)
	for name, h := range r.Hosts {
		mem := num(h.Facts["mem_total_kb"])
		if mem != nil {
			*mem = math.Round(*mem / 1024)
		}
		s.Hosts[name] = Host{
			Hostname: h.Facts["hostname"], Kernel: h.Facts["kernel"], OS: h.Facts["os"],
			CPUModel: h.Facts["cpu_model"], CPUs: num(h.Facts["cpus"]), MemTotalMB: mem,
			UlimitNSoft: h.Facts["ulimit_n_soft"], UlimitNHard: h.Facts["ulimit_n_hard"],
			NIC: h.Facts["nic"], NICMTU: num(h.Facts["nic_mtu"]), NICSpeed: num(h.Facts["nic_speed_mbps"]),
			NICDriver: h.Facts["nic_driver"], Sysctls: h.Sysctls, Tools: h.Tools,
		}
	}
	s.Notes = append(s.Notes, oomFindings(r)...)
	if set, err := clienthosts.FromRun(r); err != nil {
		s.Notes = append(s.Notes, err.Error())
	} else {
		s.set, s.Clients = set, ClientsFrom(set)
	}
	if cc := r.Get("client.1.cpus"); cc != "" && r.Get("server.cpus") != "" {
		s.Pin = &Pin{Server: r.Get("server.cpus"), Client: cc}
	}
	s.Link = LinkFor(r.Settings["LINK_RATE"], s.Lab)
	if r.Get("server.kind") != "" || httpPhase(s.Phase) {
		sv := ServerFor(r)
		s.Server = &sv
		s.TLS = TLSFor(r)
		s.HTTP = HTTPFor(r)
	}
	return s
}

// NewCell starts a Cell from a cells.tsv line.
func NewCell(c rundir.Cell) Cell {
	return Cell{
		Name: c.Name, Params: c.Params, Metrics: map[string]*float64{}, Status: c.Status,
		Error: strp(c.Error), StartedAt: c.Start.Format(time.RFC3339Nano), EndedAt: c.End.Format(time.RFC3339Nano),
	}
}

// File and CSVFile are the names of a run's summary in its directory.
const (
	File    = "summary.json"
	CSVFile = "summary.csv"
)

// Write writes summary.json and summary.csv into dir, each by temp-and-
// rename: a reader never sees half a file, a failure leaves the old one.
// With one client host a cell's per-client table, overlap and latency
// merge are the cell's own figures: the file leaves them out.
func (s *Summary) Write(dir string) error {
	doc := *s
	if doc.ClientSet().N() == 1 {
		doc.Cells = make([]Cell, len(s.Cells))
		for i, c := range s.Cells {
			c.Clients, c.Overlap, c.LatencyMerge = nil, nil, ""
			doc.Cells[i] = c
		}
	}
	b, err := json.MarshalIndent(&doc, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, File), append(b, '\n'), 0o644); err != nil {
		return err
	}
	return atomicfile.WriteWith(filepath.Join(dir, CSVFile), 0o644, s.WriteCSV)
}

// LoadDir reads the summary.json of the run directory dir.
func LoadDir(dir string) (*Summary, error) { return Load(filepath.Join(dir, File)) }

// WriteCSV writes one row per cell: name, status, params, then every metric
// (the union over cells, sorted); a null metric is an empty field.
func (s *Summary) WriteCSV(w io.Writer) error {
	params, metrics := map[string]bool{}, map[string]bool{}
	for _, c := range s.Cells {
		for k := range c.Params {
			params[k] = true
		}
		for k := range c.Metrics {
			metrics[k] = true
		}
	}
	pk, mk := sortedSet(params), sortedSet(metrics)
	cw := csv.NewWriter(w)
	head := append([]string{"run_id", "cell", "status"}, pk...)
	head = append(head, mk...)
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, c := range s.Cells {
		row := []string{s.RunID, c.Name, c.Status}
		for _, k := range pk {
			row = append(row, c.Params[k])
		}
		for _, k := range mk {
			if v := c.Metrics[k]; v != nil {
				row = append(row, strconv.FormatFloat(*v, 'f', -1, 64))
			} else {
				row = append(row, "")
			}
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Load reads a summary.json: the one way every reader (compare, report,
// the HTTP phases' baseline) gets one. A file of another schema_version is
// refused with a *VersionError before its fields are trusted; one holding
// a figure no tool can produce (a negative rate, a throughput far above
// the line rate: see values.go) with a *ValueError naming the field.
func Load(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if probe.SchemaVersion != SchemaVersion {
		return nil, &VersionError{Path: path, Got: probe.SchemaVersion}
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.checkValues(path); err != nil {
		return nil, err
	}
	return &s, nil
}

// Cell returns the cell named name, or nil.
func (s *Summary) Cell(name string) *Cell {
	for i := range s.Cells {
		if s.Cells[i].Name == name {
			return &s.Cells[i]
		}
	}
	return nil
}

// ClientTiming reads when client cc's tool of cell rc ran (the timing `csb
// start-at` wrote beside its output raw, on a run that has one), sets
// cc.StartLagMs from it and returns it (nil when there is none) with the
// notes for the summary: a timing missing where one was expected, a tool
// (named tool) that exited non-zero.
func ClientTiming(set *clienthosts.Set, rc rundir.Cell, raw, tool string, cc *ClientCell) (*clienthosts.Timing, []string) {
	t, err := clienthosts.ReadTiming(clienthosts.TimingPath(raw))
	if err != nil {
		// A run from before each client had its own directory has none.
		if set.TimingExpected(rc.Status, raw, err) {
			return nil, []string{fmt.Sprintf("cell %s: %s: no timing: %s", rc.Name, cc.Label, OneLine(err.Error(), MaxErrorLen))}
		}
		return nil, nil
	}
	lag := float64(*t.StartMs - *t.DueMs)
	cc.StartLagMs = &lag
	if *t.Exit != 0 {
		return &t, []string{fmt.Sprintf("cell %s: %s: %s exited %d", rc.Name, cc.Label, tool, *t.Exit)}
	}
	return &t, nil
}
