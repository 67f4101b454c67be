package phase3

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"csbench/internal/c10kplan"
	"csbench/internal/kv"
	"csbench/internal/rundir"
)

// RefusalCode is the key of the plan view that holds the plan's refusal
// code (summary.json details.plan.refusal_code).
const RefusalCode = "refusal_code"

// cellPlan is one cell's plan as this phase reads it: the plan document
// (nil when the cell has none or it could not be read), the flat view
// summary.json keeps of it (details "plan"), the file it came from and
// why it could not be read.
type cellPlan struct {
	Plan *c10kplan.Plan
	View map[string]string
	File string
	Err  error
}

// readPlans reads the plan of every cell of the run (readPlan). Summarize
// reads them for the figures and the verdicts, Report again for its
// sentences: the plans live in the run directory, not in the summary.
func readPlans(r *rundir.Run) map[string]cellPlan {
	out := map[string]cellPlan{}
	for _, rc := range r.Cells {
		p, view, file, err := readPlan(r.Dir, rc.Name)
		out[rc.Name] = cellPlan{Plan: p, View: view, File: file, Err: err}
	}
	return out
}

// readPlan reads a cell's plan: raw/<cell>.plan.json, the plan document
// (c10kplan.Read checks its schema version), or raw/<cell>.plan.env of a
// run made before the document existed, converted into the document once
// here (planFromEnv). It returns the plan, the flat view summary.json
// keeps (planView: for a plan.env only the keys the file had, so the
// summary of an old run stays what it was), and the file it read.
func readPlan(dir, cell string) (*c10kplan.Plan, map[string]string, string, error) {
	name := "raw/" + cell + ".plan.json"
	p, err := c10kplan.Read(filepath.Join(dir, name))
	if err == nil {
		return p, planView(p), name, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, name, err
	}
	name = "raw/" + cell + ".plan.env"
	m, err := kv.Read(filepath.Join(dir, name), "=")
	if err != nil {
		return nil, nil, name, err
	}
	p = planFromEnv(m)
	view := planView(p)
	for k := range view {
		if _, ok := m[k]; !ok {
			delete(view, k)
		}
	}
	return p, view, name, nil
}

func itoa[T int | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// planView flattens the plan document into the keys of plan.env, and
// refusal_code: what summary.json keeps of it (details "plan"). Nothing
// in this package reads it back: decisions and sentences read the plan.
func planView(p *c10kplan.Plan) map[string]string {
	in, s, c := &p.Scenario, &p.Facts.Server, &p.Facts.Client
	var ips, shares, hosts []string
	for _, src := range p.Sources {
		ips = append(ips, src.IP)
		shares = append(shares, itoa(src.Connections))
		hosts = append(hosts, src.Host)
	}
	m := map[string]string{
		"scenario": in.Kind, "connections_target": itoa(in.Conns),
		"server_fd_hard": p.ServerFDHard.String(), "server_fd_margin": itoa(c10kplan.FDMargin),
		"server_conns_per_proc_max": itoa(p.ServerConnsPerProc), "server_procs": itoa(p.ServerProcs),
		"client_fd_hard": p.ClientFDHard.String(), "client_procs": itoa(len(p.Sources)),
		"client_procs_needed": itoa(p.ClientProcsNeeded), "client_procs_by_fd": itoa(p.ClientProcsByFD),
		"client_sources": strings.Join(ips, ","), "client_shares": strings.Join(shares, ","),
		"client_source_hosts": strings.Join(hosts, ","), "client_hosts": itoa(len(p.Hosts)),
		"client_port_range":       portRange(p),
		"client_ports_per_source": p.PortsPerSource.String(), "client_tcp_tw_reuse": c.TWReuse.String(),
		"client_tw_reusable": bit(p.TWReusable), "tw_threshold": itoa(in.TWThreshold),
		"connect_rate_per_s": itoa(in.ConnectRate), "backlog_needed": itoa(p.BacklogNeeded),
		"server_somaxconn": s.Somaxconn.String(), "server_tcp_max_syn_backlog": s.SynBacklog.String(),
		"server_kb_per_conn_estimate": itoa(p.ServerKBPerConn), "client_kb_per_conn_estimate": itoa(p.ClientKBPerConn),
		"server_mem_available_kb": s.MemAvailableKB.String(), "client_mem_available_kb": c.MemAvailableKB.String(),
		"shared_host": bit(p.SharedHost), "tw_waited": bit(in.TWWaited),
		"note": p.Note(), "refusal": p.Refusal(), RefusalCode: p.Code(),
	}
	for _, st := range p.Candidates {
		m[fmt.Sprintf("source.%s.in_use", st.IP)] = itoa(st.InUse)
		m[fmt.Sprintf("source.%s.time_wait", st.IP)] = itoa(st.TimeWait)
	}
	return m
}

// planFromEnv converts the lines of a plan.env (env, written by lib/c10k.sh
// before `csb c10k-plan` wrote the plan document) into the document they
// stand for: what a number left unread (empty, or not a number) becomes
// unreadable; a refusal is a sentence without a code (plan.env had
// none); one client host. client_procs_by_fd, which plan.env did not
// record, is what the plan computes from the client's hard fd limit.
func planFromEnv(env map[string]string) *c10kplan.Plan {
	n := func(k string) c10kplan.Num { return parseNum(env[k]) }
	i := func(k string) int64 { return n(k).V }
	p := &c10kplan.Plan{SchemaVersion: c10kplan.SchemaVersion, Document: "c10k-plan", Stage: "sources",
		Refusals: []c10kplan.Refusal{}, Hosts: []c10kplan.HostPlan{}, Sources: []c10kplan.Source{},
		Candidates: []c10kplan.SourceState{}, Notes: []string{}}
	in := &p.Scenario
	in.Kind, in.Conns, in.ConnectRate, in.TWThreshold = env["scenario"], i("connections_target"), i("connect_rate_per_s"), i("tw_threshold")
	in.TWWaited = env["tw_waited"] == "1"
	srv, cli := &p.Facts.Server, &p.Facts.Client
	srv.FDHard, cli.FDHard = n("server_fd_hard"), n("client_fd_hard")
	srv.Somaxconn, srv.SynBacklog, srv.MemAvailableKB = n("server_somaxconn"), n("server_tcp_max_syn_backlog"), n("server_mem_available_kb")
	cli.TWReuse, cli.MemAvailableKB = n("client_tcp_tw_reuse"), n("client_mem_available_kb")
	if lo, hi, ok := strings.Cut(env["client_port_range"], "-"); ok {
		cli.PortLo, cli.PortHi = parseNum(lo), parseNum(hi)
	}
	in.Server, in.Client = *srv, *cli
	p.ServerFDHard, p.ClientFDHard = srv.FDHard, cli.FDHard
	p.ServerConnsPerProc, p.ServerProcs = i("server_conns_per_proc_max"), i("server_procs")
	p.ClientProcsNeeded = i("client_procs_needed")
	p.PortsPerSource = n("client_ports_per_source")
	p.TWReusable, p.SharedHost = env["client_tw_reusable"] == "1", env["shared_host"] == "1"
	p.BacklogNeeded = i("backlog_needed")
	p.ServerKBPerConn, p.ClientKBPerConn = i("server_kb_per_conn_estimate"), i("client_kb_per_conn_estimate")
	if v, ok := env["client_procs_by_fd"]; ok {
		p.ClientProcsByFD = parseNum(v).V
	} else if cli.FDHard.Known && cli.FDHard.V > c10kplan.FDMargin {
		per := cli.FDHard.V - c10kplan.FDMargin
		p.ClientProcsByFD = (in.Conns + per - 1) / per
	}
	ips, shares := splitList(env["client_sources"]), splitList(env["client_shares"])
	for k, ip := range ips {
		s := c10kplan.Source{IP: ip}
		if k < len(shares) {
			s.Connections = parseNum(shares[k]).V
		}
		p.Sources = append(p.Sources, s)
	}
	p.Hosts = append(p.Hosts, c10kplan.HostPlan{Connections: in.Conns, ConnectRate: in.ConnectRate,
		ProcsByFD: p.ClientProcsByFD, Procs: p.ClientProcsNeeded})
	states := map[string]*c10kplan.SourceState{}
	for k, v := range env {
		rest, ok := strings.CutPrefix(k, "source.")
		if !ok {
			continue
		}
		dot := strings.LastIndex(rest, ".")
		if dot < 0 {
			continue
		}
		ip, what := rest[:dot], rest[dot+1:]
		if states[ip] == nil {
			states[ip] = &c10kplan.SourceState{IP: ip}
		}
		switch what {
		case "in_use":
			states[ip].InUse = parseNum(v).V
		case "time_wait":
			states[ip].TimeWait = parseNum(v).V
		}
	}
	for _, ip := range kv.SortedKeys(states) {
		p.Candidates = append(p.Candidates, *states[ip])
	}
	if v := env["note"]; v != "" {
		p.Notes = append(p.Notes, v)
	}
	if v := env["refusal"]; v != "" {
		p.Refusals = append(p.Refusals, c10kplan.Refusal{Message: v})
	}
	p.OK = len(p.Refusals) == 0
	return p
}

// parseNum reads a count of plan.env: a number, "unlimited" (an fd
// limit), else unreadable.
func parseNum(s string) c10kplan.Num {
	if s == "unlimited" {
		return c10kplan.Num{V: c10kplan.Unlimited, Known: true}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return c10kplan.Num{}
	}
	return c10kplan.Num{V: v, Known: true}
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// The plan's figures as the sentences print them; "" for a cell without
// a plan.

// portRange is the client's ip_local_port_range, "lo-hi".
func portRange(p *c10kplan.Plan) string {
	if p == nil {
		return ""
	}
	return p.Facts.Client.PortLo.String() + "-" + p.Facts.Client.PortHi.String()
}

func numText(p *c10kplan.Plan, get func(*c10kplan.Plan) c10kplan.Num) string {
	if p == nil {
		return ""
	}
	return get(p).String()
}

// sourceTimeWait is the TIME_WAIT toward the server of each candidate
// source address when the plan was made, by address in string order.
func sourceTimeWait(p *c10kplan.Plan) (ips []string, tw map[string]int64) {
	tw = map[string]int64{}
	if p == nil {
		return nil, tw
	}
	for _, st := range p.Candidates {
		tw[st.IP] = st.TimeWait
	}
	return kv.SortedKeys(tw), tw
}

// multiHost says whether the plan spread the scenario over several client
// hosts: then each source names its host.
func multiHost(p *c10kplan.Plan) bool { return p != nil && len(p.Hosts) > 1 }
