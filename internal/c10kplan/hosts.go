package c10kplan

import (
	"fmt"

	"csbench/internal/loadplan"
)

// ClientHost is one client host of a scenario: its name (ssh destination or
// "local"), its benchmark address and NIC, more addresses (LAB=ssh), its
// facts and, for the sources stage, its sockets toward the server and the
// addresses on its NIC.
type ClientHost struct {
	Name     string   `json:"name"`
	IP       string   `json:"ip"`
	NIC      string   `json:"nic"`
	ExtraIPs []string `json:"extra_ips"`
	Facts    Host     `json:"facts"`

	Sockets *Sockets        `json:"-"`
	Present map[string]bool `json:"-"`
}

// HostPlan is what the plan gives one client host: its share of the
// scenario and how many client processes carry it.
type HostPlan struct {
	Name        string `json:"name"`
	IP          string `json:"ip"`
	Connections int64  `json:"connections"`
	ConnectRate int64  `json:"connect_rate_per_s"`
	RPS         int64  `json:"rps"`
	ProcsByFD   int64  `json:"client_procs_by_fd"`
	ProcsByPort int64  `json:"client_procs_by_ports"`
	Procs       int64  `json:"client_procs"`
}

// ComputeHosts plans a scenario over several client hosts: the connections,
// the connect rate and the requests are split evenly across the hosts; the
// server side (processes, backlog, memory, files) is planned for the whole
// scenario, each host's side (fd limit, ports, source addresses, memory)
// for its share, on its own facts. Every source names its host; a refusal
// about a host names it and the setting to change there. With one host (or
// none: in.Client and in.ClientIP are the host) it is Compute.
func ComputeHosts(in Input, hosts []ClientHost) *Plan {
	if len(hosts) == 0 {
		hosts = []ClientHost{{Name: "local", IP: in.ClientIP, NIC: in.ClientNIC, ExtraIPs: in.ExtraIPs, Facts: in.Client,
			Sockets: in.Sockets, Present: in.Present}}
	}
	// The whole scenario against the server, with the first host as the
	// client: only its server-side findings are kept when there are several.
	first := hostInput(in, hosts[0], in.Conns, in.ConnectRate, in.RPS)
	if len(hosts) > 1 {
		// Its sources are replaced by the hosts' below: without the
		// sockets it picks none and notes no address it would add.
		first.Sockets = nil
	}
	p := Compute(first)
	p.Hosts = []HostPlan{}
	if len(hosts) == 1 {
		for i := range p.Sources {
			p.Sources[i].Host = hosts[0].Name
			p.Sources[i].Threads = threads(in.Kind, hosts[0], p.Sources[i].Connections)
		}
		p.Hosts = append(p.Hosts, HostPlan{Name: hosts[0].Name, IP: hosts[0].IP, Connections: in.Conns, ConnectRate: in.ConnectRate,
			RPS: in.RPS, ProcsByFD: p.ClientProcsByFD, ProcsByPort: p.ClientProcsByPorts, Procs: p.ClientProcsNeeded})
		return p
	}
	var keep []Refusal
	for _, r := range p.Refusals {
		if r.Host != "client" {
			keep = append(keep, r)
		}
	}
	notes, client := p.Notes, p.ClientNotes
	p.Notes, p.ClientNotes = []string{}, nil
	for i, n := range notes {
		if !client[i] {
			p.note(false, n)
		}
	}
	p.Refusals = append([]Refusal{}, keep...)
	p.Sources, p.Candidates = []Source{}, []SourceState{}
	p.RetryAfterTimeWait = false
	p.ClientProcsByFD, p.ClientProcsByPorts, p.ClientProcsNeeded = 0, 0, 0
	p.PortRangeWanted = "" // any host's wish, set on every client host
	p.Stage = "preflight"
	c, r, q := loadplan.Split(in.Conns, len(hosts)), loadplan.Split(in.ConnectRate, len(hosts)), loadplan.Split(in.RPS, len(hosts))
	for i, h := range hosts {
		sub := Compute(hostInput(in, h, c[i], r[i], q[i]))
		p.Hosts = append(p.Hosts, HostPlan{Name: h.Name, IP: h.IP, Connections: c[i], ConnectRate: r[i], RPS: q[i],
			ProcsByFD: sub.ClientProcsByFD, ProcsByPort: sub.ClientProcsByPorts, Procs: sub.ClientProcsNeeded})
		p.ClientProcsByFD += sub.ClientProcsByFD
		p.ClientProcsByPorts += sub.ClientProcsByPorts
		p.ClientProcsNeeded += sub.ClientProcsNeeded
		if sub.PortRangeWanted != "" {
			p.PortRangeWanted = sub.PortRangeWanted
		}
		for _, rf := range sub.Refusals {
			if rf.Host == "client" {
				rf.Host = "client " + h.Name
				rf.Message = "client host " + h.Name + ": " + rf.Message
				p.Refusals = append(p.Refusals, rf)
			}
		}
		for i, n := range sub.Notes {
			if sub.ClientNotes[i] || sub.Stage == "sources" {
				p.note(true, "client host "+h.Name+": "+n)
			}
		}
		p.RetryAfterTimeWait = p.RetryAfterTimeWait || sub.RetryAfterTimeWait
		if sub.Stage == "sources" {
			p.Stage = "sources"
		}
		for _, s := range sub.Sources {
			s.Host = h.Name
			s.Threads = threads(in.Kind, h, s.Connections)
			p.Sources = append(p.Sources, s)
		}
		p.Candidates = append(p.Candidates, sub.Candidates...)
	}
	p.OK = len(p.Refusals) == 0
	if !p.OK {
		p.Sources = []Source{}
		p.Stage = "preflight"
	}
	return p
}

// threads is the wrk threads of an active source on host h: one per CPU
// there, never more than its connections.
func threads(kind string, h ClientHost, conns int64) int {
	if kind != "active" {
		return 0
	}
	return loadplan.Threads(0, int(h.Facts.CPUs.V), conns)
}

// hostInput is in for one client host's share.
func hostInput(in Input, h ClientHost, conns, rate, rps int64) Input {
	out := in
	out.Conns, out.ConnectRate, out.RPS = conns, rate, rps
	out.ClientIP, out.ClientNIC, out.ExtraIPs, out.Client = h.IP, h.NIC, h.ExtraIPs, h.Facts
	out.Sockets, out.Present = h.Sockets, h.Present
	return out
}

// HostNames lists the hosts of the plan's sources, in source order.
func (p *Plan) HostNames() []string {
	var out []string
	for _, s := range p.Sources {
		out = append(out, s.Host)
	}
	return out
}

func (h HostPlan) String() string {
	return fmt.Sprintf("%s: %d connections, %d client processes", h.Name, h.Connections, h.Procs)
}
