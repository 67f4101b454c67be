package compare

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/kv"
	"csbench/internal/mdtext"
	"csbench/internal/summary"
)

// Unreadable is the value of a fact a run did not record or whose capture
// failed: never "" and never 0.
const Unreadable = "unreadable"

// Difference is one fact of the two runs' environments that differs.
// Code is stable and is what a script reads: cpu_model, cpu_count,
// cpu_pinning, kernel, link_rate, nic_speed_mbps, nic_mtu, qdisc, ulimit_n,
// sysctl:<key>, server, server_setting:<name>, setting:<KEY> (a runner's
// setting as run.env resolved it: SLOTS, NGINX_TCP_NOPUSH, HTTP, ...),
// tool:<name>, lab, profile, clients. Hosts names the hosts the values are of (server, client), none
// for a fact of the whole run; A and B are the values, Unreadable where one
// could not be read.
type Difference struct {
	Code  string   `json:"code"`
	Hosts []string `json:"hosts,omitempty"`
	A     string   `json:"a"`
	B     string   `json:"b"`
}

// ServerCode says the code is of the server under test (server,
// server_setting:*) or of the run's own settings (setting:*) rather than
// of the machines around it.
func ServerCode(code string) bool {
	return code == "server" || strings.HasPrefix(code, "server_setting:") || strings.HasPrefix(code, "setting:")
}

// settingsApart are the settings a run's identity or another code already
// covers: they are not compared as setting:<KEY>.
var settingsApart = map[string]bool{"RESULTS_ROOT": true, "RUN_NAME": true, "BASELINE_RUN": true, "LAB": true,
	"PROFILE": true, "CLIENTS": true, "LINK_RATE": true, "SCHEME": true, "SERVER": true, "CPU_PIN": true}

// Env is what the two runs' environments were compared on and where they
// differ.
type Env struct {
	// Checked is every code compared, in the order of Differences.
	Checked     []string     `json:"checked"`
	Differences []Difference `json:"differences"`
}

// Codes are the codes of the differences, in order, each once.
func (e *Env) Codes() []string {
	var out []string
	for _, d := range e.Differences {
		if len(out) == 0 || out[len(out)-1] != d.Code {
			out = append(out, d.Code)
		}
	}
	return out
}

// MachinesDiffer says some difference is not the server under test's own:
// a change between the runs cannot be put down to the server alone.
func (e *Env) MachinesDiffer() bool {
	for _, d := range e.Differences {
		if !ServerCode(d.Code) {
			return true
		}
	}
	return false
}

// baseSysctls are what every phase's TCP transfer depends on; httpSysctls
// what a phase that accepts connections adds; connSysctls what a phase
// that holds or churns many connections adds (Phases 3 and 4).
var (
	baseSysctls = []string{
		"net.ipv4.tcp_congestion_control", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
		"net.core.rmem_max", "net.core.wmem_max", "net.core.default_qdisc", "net.core.netdev_max_backlog",
		"net.ipv4.tcp_mtu_probing", "net.ipv4.tcp_slow_start_after_idle",
	}
	httpSysctls = []string{
		"net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog", "net.ipv4.ip_local_port_range",
		"net.ipv4.tcp_tw_reuse", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_syncookies",
	}
	connSysctls = []string{"fs.file-max", "fs.nr_open", "net.ipv4.tcp_max_tw_buckets"}
)

// PhaseSysctls are the sysctls a phase depends on; nil for a phase this
// csb does not know (then every sysctl either run captured is compared).
func PhaseSysctls(phase string) []string {
	cat := func(ls ...[]string) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l...)
		}
		return out
	}
	switch {
	case strings.HasPrefix(phase, "00-"):
		return cat(baseSysctls)
	case strings.HasPrefix(phase, "01-"), strings.HasPrefix(phase, "02-"):
		return cat(baseSysctls, httpSysctls)
	case strings.HasPrefix(phase, "03-"), strings.HasPrefix(phase, "04-"):
		return cat(baseSysctls, httpSysctls, connSysctls)
	}
	return nil
}

// side is one run as the environment comparison reads it.
type side struct {
	s   *summary.Summary
	dir string // "" when only the summary is at hand: qdiscs not compared
}

// labels are the hosts of a role a run's facts are compared by: the
// server, and the client hosts (one, or with N clients client1..N, read as
// one role whose value lists them where they differ).
func (sd side) labels(role string) []string {
	if role == "server" {
		return []string{"server"}
	}
	if sd.s.Clients != nil && len(sd.s.Clients.Hosts) > 0 {
		var out []string
		for _, h := range sd.s.Clients.Hosts {
			out = append(out, h.Label)
		}
		return out
	}
	return []string{"client"}
}

// hostValue is one role's value of a fact: the hosts' value when they agree,
// else each host's, labelled.
func (sd side) hostValue(role string, get func(label string, h summary.Host, ok bool) string) string {
	labels := sd.labels(role)
	vals := make([]string, len(labels))
	same := true
	for i, l := range labels {
		h, ok := sd.s.Hosts[l]
		vals[i] = orUnreadable(get(l, h, ok))
		same = same && vals[i] == vals[0]
	}
	if same {
		return vals[0]
	}
	for i := range vals {
		vals[i] = labels[i] + " " + vals[i]
	}
	return strings.Join(vals, ", ")
}

func orUnreadable(v string) string {
	if v == "" || strings.HasPrefix(v, Unreadable) {
		// "unreadable (sysctl: cannot stat ...)": the reason is in the
		// run's env/; both runs' unreadable values are the same.
		return Unreadable
	}
	return v
}

func fnum(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'f', -1, 64)
}

// qdiscFor reads env/<label>/qdisc.txt (tc qdisc show) for the host's
// benchmark NIC: each qdisc's kind and parameters, root first, without
// the handles and counters that differ from run to run.
func qdiscFor(dir, label, nic string) string {
	if nic == "" {
		return ""
	}
	f, err := os.Open(filepath.Join(dir, "env", label, "qdisc.txt"))
	if err != nil {
		return ""
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		// qdisc KIND HANDLE: dev DEV root|parent ID [refcnt N] PARAMS...
		if len(fs) < 6 || fs[0] != "qdisc" || fs[3] != "dev" || fs[4] != nic {
			continue
		}
		rest, where := fs[6:], "root"
		if fs[5] == "parent" {
			where = "child"
			if len(rest) > 0 {
				rest = rest[1:]
			}
		}
		if len(rest) >= 2 && rest[0] == "refcnt" {
			rest = rest[2:]
		}
		out = append(out, strings.Join(append([]string{where, fs[1]}, rest...), " "))
	}
	if sc.Err() != nil {
		return ""
	}
	return strings.Join(out, "; ")
}

// pinning is the CPUs each host's processes ran on (CPU_PIN, SERVER_CPUS).
func pinning(s *summary.Summary) string {
	var srv string
	var cli []string
	if s.Pin != nil {
		srv, cli = s.Pin.Server, []string{s.Pin.Client}
	}
	if s.Clients != nil {
		if srv == "" {
			srv = s.Clients.ServerCPUs
		}
		cli = cli[:0]
		for _, h := range s.Clients.Hosts {
			cli = append(cli, h.CPUs)
		}
	}
	if srv == "" && s.Server != nil {
		srv = s.Server.CPUs
	}
	set := map[string]bool{}
	var cs []string
	for _, c := range cli {
		if c == "" {
			c = "all"
		}
		if !set[c] {
			set[c] = true
			cs = append(cs, c)
		}
	}
	client := strings.Join(cs, "/")
	if client == "" {
		client = "all"
	}
	if srv == "" && client == "all" {
		return "none (server and client on all CPUs)"
	}
	if srv == "" {
		srv = "all"
	}
	return fmt.Sprintf("server CPUs %s, client CPUs %s", srv, client)
}

func serverValue(sv *summary.Server) string {
	if sv.Version == "" {
		return sv.Label() + " (version unreadable)"
	}
	return sv.Label() + " (" + sv.Version + ")"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Environments compares the environments of runs a and b: the facts the
// summaries carry (summary.Host, the link, the pinning, the server under
// test) and, where the run directories are given, each host's qdisc.
func Environments(a, b *summary.Summary, dirA, dirB string) *Env {
	sa, sb := side{s: a, dir: dirA}, side{s: b, dir: dirB}
	e := &Env{Checked: []string{}, Differences: []Difference{}}
	run := func(code string, get func(s *summary.Summary) string) {
		e.Checked = append(e.Checked, code)
		va, vb := orUnreadable(get(a)), orUnreadable(get(b))
		if va != vb {
			e.Differences = append(e.Differences, Difference{Code: code, A: va, B: vb})
		}
	}
	host := func(code string, get func(sd side, label string, h summary.Host, ok bool) string) {
		e.Checked = append(e.Checked, code)
		var ds []Difference
		for _, role := range []string{"server", "client"} {
			va := sa.hostValue(role, func(l string, h summary.Host, ok bool) string { return get(sa, l, h, ok) })
			vb := sb.hostValue(role, func(l string, h summary.Host, ok bool) string { return get(sb, l, h, ok) })
			if va == vb {
				continue
			}
			if n := len(ds); n > 0 && ds[n-1].A == va && ds[n-1].B == vb {
				ds[n-1].Hosts = append(ds[n-1].Hosts, role)
				continue
			}
			ds = append(ds, Difference{Code: code, Hosts: []string{role}, A: va, B: vb})
		}
		e.Differences = append(e.Differences, ds...)
	}
	fact := func(f func(h summary.Host) string) func(side, string, summary.Host, bool) string {
		return func(_ side, _ string, h summary.Host, ok bool) string {
			if !ok {
				return ""
			}
			return f(h)
		}
	}

	run("lab", func(s *summary.Summary) string { return s.Lab })
	run("profile", func(s *summary.Summary) string { return s.Profile })
	run("clients", func(s *summary.Summary) string { return strconv.Itoa(ClientCount(s)) })
	host("cpu_model", fact(func(h summary.Host) string { return h.CPUModel }))
	// cpu_count is facts.env's nproc: the CPUs the host's processes may
	// use, so CPU_PIN lowers it.
	host("cpu_count", fact(func(h summary.Host) string { return fnum(h.CPUs) }))
	run("cpu_pinning", pinning)
	host("kernel", fact(func(h summary.Host) string { return h.Kernel }))
	run("link_rate", func(s *summary.Summary) string { return s.Link.Rate })
	host("nic_speed_mbps", fact(func(h summary.Host) string { return fnum(h.NICSpeed) }))
	host("nic_mtu", fact(func(h summary.Host) string { return fnum(h.NICMTU) }))
	if dirA != "" && dirB != "" {
		host("qdisc", func(sd side, l string, h summary.Host, ok bool) string {
			if !ok {
				return ""
			}
			return qdiscFor(sd.dir, l, h.NIC)
		})
	}
	host("ulimit_n", fact(func(h summary.Host) string {
		if h.UlimitNSoft == "" || h.UlimitNHard == "" {
			return ""
		}
		return h.UlimitNSoft + "/" + h.UlimitNHard
	}))
	keys := PhaseSysctls(a.Phase)
	if keys == nil {
		keys = unionKeys(a, b, func(h summary.Host) map[string]string { return h.Sysctls })
	}
	for _, k := range keys {
		host("sysctl:"+k, fact(func(h summary.Host) string { return h.Sysctls[k] }))
	}
	if a.Server != nil || b.Server != nil {
		srv := func(f func(sv *summary.Server) string) func(s *summary.Summary) string {
			return func(s *summary.Summary) string {
				if s.Server == nil {
					return ""
				}
				return f(s.Server)
			}
		}
		run("server", srv(serverValue))
		run("server_setting:workers", srv(func(sv *summary.Server) string { return sv.Workers }))
		run("server_setting:managed", srv(func(sv *summary.Server) string { return yesNo(sv.Managed) }))
		run("server_setting:connection_close", srv(func(sv *summary.Server) string { return yesNo(sv.ConnectionClose) }))
		run("server_setting:scheme", Scheme)
		if a.Server != nil && a.Server.Nginx != "" || b.Server != nil && b.Server.Nginx != "" {
			run("server_setting:nginx", srv(func(sv *summary.Server) string {
				if sv.Kind != "nginx" {
					return "none (not nginx)"
				}
				return sv.Nginx
			}))
		}
	}
	set := map[string]bool{}
	for _, s := range []*summary.Summary{a, b} {
		for k := range s.Settings {
			set[k] = !settingsApart[k]
		}
	}
	for _, k := range kv.SortedKeys(set) {
		if set[k] {
			run("setting:"+k, func(s *summary.Summary) string {
				if v, ok := s.Settings[k]; ok && v == "" {
					return "(empty)"
				}
				return s.Settings[k]
			})
		}
	}
	for _, t := range unionKeys(a, b, func(h summary.Host) map[string]string { return h.Tools }) {
		host("tool:"+t, fact(func(h summary.Host) string { return h.Tools[t] }))
	}
	return e
}

func unionKeys(a, b *summary.Summary, m func(h summary.Host) map[string]string) []string {
	set := map[string]bool{}
	for _, s := range []*summary.Summary{a, b} {
		for _, h := range s.Hosts {
			for k := range m(h) {
				set[k] = true
			}
		}
	}
	return kv.SortedKeys(set)
}

// checkedSummary names the fields compared, in a few words: each code,
// the sysctls and tools counted rather than listed; with machinesOnly, not
// the server under test's.
func (e *Env) checkedSummary(machinesOnly bool) string {
	var out, settings []string
	nSys, nTool, nSet := 0, 0, 0
	for _, c := range e.Checked {
		switch {
		case machinesOnly && ServerCode(c):
		case strings.HasPrefix(c, "setting:"):
			nSet++
		case strings.HasPrefix(c, "sysctl:"):
			nSys++
		case strings.HasPrefix(c, "tool:"):
			nTool++
		case strings.HasPrefix(c, "server_setting:"):
			settings = append(settings, strings.TrimPrefix(c, "server_setting:"))
		default:
			out = append(out, c)
		}
	}
	if len(settings) > 0 {
		out = append(out, "server settings ("+strings.Join(settings, ", ")+")")
	}
	if nSys > 0 {
		out = append(out, fmt.Sprintf("%d sysctls", nSys))
	}
	if nSet > 0 {
		out = append(out, fmt.Sprintf("%d run settings", nSet))
	}
	if nTool > 0 {
		out = append(out, fmt.Sprintf("%d tool versions", nTool))
	}
	return strings.Join(out, ", ")
}

// whatDiffers names what differs where no machine does: the servers under
// test, the runs' settings (setting:*), or both.
func (e *Env) whatDiffers() string {
	server, settings := false, false
	for _, d := range e.Differences {
		if strings.HasPrefix(d.Code, "setting:") {
			settings = true
		} else {
			server = true
		}
	}
	switch {
	case server && settings:
		return "The servers under test and the runs' settings"
	case settings:
		return "The runs' settings"
	}
	return "The servers under test"
}

// Markdown is the environment section a comparison opens with: one line per
// difference, then what it means; or the fields found the same.
func (e *Env) Markdown() string {
	var b strings.Builder
	if len(e.Differences) == 0 {
		fmt.Fprintf(&b, "Same environment: %s.\n\n", e.checkedSummary(false))
		return b.String()
	}
	if e.MachinesDiffer() {
		b.WriteString("**Environments differ** (A → B):\n\n")
	} else {
		fmt.Fprintf(&b, "**%s differ** (A → B):\n\n", e.whatDiffers())
	}
	for _, d := range e.Differences {
		hosts := ""
		if len(d.Hosts) > 0 {
			hosts = " (" + strings.Join(d.Hosts, ", ") + ")"
		}
		fmt.Fprintf(&b, "- `%s`%s: %s → %s\n", d.Code, mdtext.Text(hosts), mdtext.Text(d.A), mdtext.Text(d.B))
	}
	b.WriteString("\n")
	if e.MachinesDiffer() {
		b.WriteString("Where the environments differ, a change cannot be put down to the server alone.\n\n")
	} else {
		fmt.Fprintf(&b, "Only %s differ; the rest is the same: %s.\n\n", strings.ToLower(e.whatDiffers()[:1])+e.whatDiffers()[1:], e.checkedSummary(true))
	}
	return b.String()
}

// Settings are run s's settings that tell its configuration, without those
// its identity or another code already covers (settingsApart).
func Settings(s *summary.Summary) map[string]string {
	out := map[string]string{}
	for k, v := range s.Settings {
		if !settingsApart[k] {
			out[k] = v
		}
	}
	return out
}
