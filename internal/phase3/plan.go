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
)

// RefusalCode is the key of the plan view that holds the plan's refusal
// code: decisions read it, never the sentence beside it.
const RefusalCode = "refusal_code"

// readPlan reads a cell's plan: raw/<cell>.plan.json, the plan document
// (c10kplan.Read checks its schema version), or raw/<cell>.plan.env of a
// run made before the document existed. It returns the flat view the
// summary keeps and the report prints (the keys of plan.env, and
// refusal_code), and the file it read.
func readPlan(dir, cell string) (map[string]string, string, error) {
	name := "raw/" + cell + ".plan.json"
	p, err := c10kplan.Read(filepath.Join(dir, name))
	if err == nil {
		return planView(p), name, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, name, err
	}
	name = "raw/" + cell + ".plan.env"
	m, err := kv.Read(filepath.Join(dir, name), "=")
	return m, name, err
}

func itoa[T int | int64](v T) string { return strconv.FormatInt(int64(v), 10) }

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// planView flattens the plan document into the keys of plan.env.
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
		"client_port_range":       c.PortLo.String() + "-" + c.PortHi.String(),
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
