package c10kplan

import (
	"fmt"
	"net/netip"
	"strings"
)

// Refusal codes: why a scenario cannot run. Decisions read these; the
// sentence beside them is for people.
const (
	CodeFDLimit        = "fd_limit"
	CodeEphemeralPorts = "ephemeral_ports"
	CodeTimeWait       = "time_wait"
	CodeListenBacklog  = "listen_backlog"
	CodeMemory         = "memory"
	CodeFileMax        = "file_max"
	CodeRPSSplit       = "rps_below_processes"
	CodeTCPMem         = "tcp_mem"
)

// Input is a scenario and what the plan reads about the hosts.
type Input struct {
	Kind  string `json:"kind"` // idle, lowrate, active
	Conns int64  `json:"connections"`
	// Streams: the active scenario over HTTP/2, Streams per connection;
	// InFlight its requests in flight, Conns = InFlight / Streams (0: HTTP/1.1).
	Streams     int64    `json:"streams,omitempty"`
	InFlight    int64    `json:"requests_in_flight,omitempty"`
	RPS         int64    `json:"rps"`
	ConnectRate int64    `json:"connect_rate_per_s"`
	Lab         string   `json:"lab"` // local, netns, ssh
	ServerIP    string   `json:"server_ip"`
	ServerPort  int      `json:"server_port"`
	ClientIP    string   `json:"client_ip"`
	ClientNIC   string   `json:"client_nic"`
	ExtraIPs    []string `json:"client_extra_ips"`
	TWThreshold int64    `json:"tw_threshold"`
	TWWaited    bool     `json:"tw_waited"`
	// ServerKind is the server under test (csb, nginx, cmd, url): its
	// estimate of memory per connection.
	ServerKind string `json:"server_kind"`
	// AfterStep: a smaller step of the run comes first (preflight), so
	// this one's memory is checked against that step's measured cost
	// before it starts; here the estimate only warns.
	AfterStep bool `json:"after_step"`
	// Cost is the memory per connection a previous step of the run
	// measured (nil: none, the estimates are used).
	Cost *Cost `json:"measured_cost"`

	Server Host `json:"-"`
	Client Host `json:"-"`

	// Sockets is the client's sockets toward the server (from `ss`); nil
	// for the static check before the run (preflight).
	Sockets *Sockets `json:"-"`
	// Present lists the addresses on the client NIC (LAB=local: every
	// candidate is).
	Present map[string]bool `json:"-"`
}

// SplitStreams makes an active scenario over HTTP/2 of Conns requests in
// flight, streams per connection, a plan of Conns / streams connections:
// an error when streams does not divide Conns, or the scenario is not
// active.
func (in *Input) SplitStreams(streams int64) error {
	switch {
	case streams <= 0:
		return nil
	case in.Kind != "active":
		return fmt.Errorf("streams per connection are the active scenario's, not %s's", in.Kind)
	case in.Conns%streams != 0:
		return fmt.Errorf("%d streams per connection do not divide %d requests in flight", streams, in.Conns)
	}
	in.Streams, in.InFlight, in.Conns = streams, in.Conns, in.Conns/streams
	return nil
}

// Refusal is one reason a scenario cannot work.
type Refusal struct {
	Code    string `json:"code"`
	Host    string `json:"host"` // server, client, both
	Message string `json:"message"`
	Setting string `json:"setting"` // what to change
}

// Source is one client process: its source address and its shares.
type Source struct {
	Host        string `json:"host"` // the client host that runs it
	IP          string `json:"ip"`
	Add         bool   `json:"add"`  // the runner adds it to the NIC first
	Busy        bool   `json:"busy"` // TW_THRESHOLD or more in TIME_WAIT
	InUse       int64  `json:"in_use"`
	TimeWait    int64  `json:"time_wait"`
	Connections int64  `json:"connections"`
	ConnectRate int64  `json:"connect_rate_per_s"`
	RPS         int64  `json:"rps"`
	// Threads is the active scenario's wrk threads on this source's host
	// (one per CPU there, at most its connections); 0 for connclient.
	Threads int `json:"threads,omitempty"`
}

// SourceState is a candidate address's sockets toward the server.
type SourceState struct {
	IP       string `json:"ip"`
	InUse    int64  `json:"in_use"`
	TimeWait int64  `json:"time_wait"`
}

// Plan is the plan document (raw/<cell>.plan.json).
type Plan struct {
	SchemaVersion int    `json:"schema_version"`
	Document      string `json:"document"` // "c10k-plan"
	// Stage: "preflight" (facts only) or "sources" (with the sockets).
	Stage    string `json:"stage"`
	Scenario Input  `json:"scenario"`
	Facts    struct {
		Server Host `json:"server"`
		Client Host `json:"client"`
	} `json:"facts"`
	SharedHost bool `json:"shared_host"`

	OK       bool      `json:"ok"`
	Refusals []Refusal `json:"refusals"`
	// RetryAfterTimeWait: the ports are short because of TIME_WAIT; the
	// runner waits for it to drain and plans again (with tw_waited).
	RetryAfterTimeWait bool `json:"retry_after_time_wait"`

	ServerFDHard       Num   `json:"server_fd_hard"`
	ServerConnsPerProc int64 `json:"server_conns_per_proc_max"`
	ServerProcs        int64 `json:"server_procs"`
	ClientFDHard       Num   `json:"client_fd_hard"`
	ClientProcsByFD    int64 `json:"client_procs_by_fd"`
	ClientProcsByPorts int64 `json:"client_procs_by_ports"`
	ClientProcsNeeded  int64 `json:"client_procs_needed"`
	PortsPerSource     Num   `json:"client_ports_per_source"`
	TWReusable         bool  `json:"client_tw_reusable"`
	// FastPorts: each source carries at most the even half of the port
	// range, where connect() is fast (see size).
	FastPorts bool `json:"client_fast_ports"`
	// PortRangeWanted: the client's ip_local_port_range the runner sets
	// before the run where it may ("LO HI"; empty: none), because each
	// source would carry more than FastPortsPct of the range's even half.
	PortRangeWanted string `json:"client_port_range_wanted"`
	MaxSources      int    `json:"client_sources_max"`
	BacklogNeeded   int64  `json:"backlog_needed"`
	ServerKBPerConn int64  `json:"server_kb_per_conn_estimate"`
	ClientKBPerConn int64  `json:"client_kb_per_conn_estimate"`
	KernelKBPerConn int64  `json:"kernel_kb_per_conn_estimate"`
	// Memory: what the plan predicts and from what (the basis: "estimate"
	// or "measured at CELL").
	MemBasis       string `json:"mem_basis"`
	MemNeedKB      int64  `json:"mem_need_kb"`
	MemPlannableKB Num    `json:"mem_plannable_kb"`
	// TCPMemPages: the TCP buffer pages predicted with every connection
	// held (from the measured step; unknown before), against tcp_mem.
	TCPMemPages Num `json:"tcp_mem_pages_predicted"`

	// Hosts: each client host's share (one entry with one client host).
	Hosts      []HostPlan    `json:"client_hosts"`
	Sources    []Source      `json:"sources"`
	Candidates []SourceState `json:"source_states"`
	// Notes: what the runner did or could not check, for people.
	Notes []string `json:"notes"`
	// ClientNotes marks the notes about the client host (by index into
	// Notes): a plan over several client hosts takes them from each
	// host's own plan, by this mark, never by a note's words.
	ClientNotes []bool `json:"-"`
}

// note adds a note for people; client marks one about the client host.
func (p *Plan) note(client bool, text string) {
	p.Notes = append(p.Notes, text)
	p.ClientNotes = append(p.ClientNotes, client)
}

// Candidates lists the client's possible source addresses, CLIENT_IP first:
// netns and local the next MaxAddedSources addresses, ssh CLIENT_EXTRA_IPS.
func Candidates(in *Input) []string {
	out := []string{in.ClientIP}
	switch in.Lab {
	case "netns", "local":
		a, err := netip.ParseAddr(in.ClientIP)
		if err != nil || !a.Is4() {
			return out
		}
		b := a.As4()
		for i := 1; i <= MaxAddedSources && int(b[3])+i <= 254; i++ {
			c := b
			c[3] += byte(i)
			out = append(out, netip.AddrFrom4(c).String())
		}
	case "ssh":
		out = append(out, in.ExtraIPs...)
	}
	return out
}

func ceil(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

// Compute plans a scenario. It never fails: what cannot work is in
// Refusals; a fact that was unreadable skips its check, said in Notes.
func Compute(in Input) *Plan {
	if in.ExtraIPs == nil {
		in.ExtraIPs = []string{}
	}
	p := &Plan{SchemaVersion: SchemaVersion, Document: "c10k-plan", Stage: "preflight", Scenario: in,
		Refusals: []Refusal{}, Hosts: []HostPlan{}, Sources: []Source{}, Candidates: []SourceState{}, Notes: []string{}}
	p.Facts.Server, p.Facts.Client = in.Server, in.Client
	for _, k := range in.Server.Unreadable {
		p.note(false, "the server's "+k+" was unreadable: what depends on it was not checked")
	}
	for _, k := range in.Client.Unreadable {
		p.note(true, "the client's "+k+" was unreadable: what depends on it was not checked")
	}
	p.size()
	p.checkFDs()
	p.checkPorts()
	p.checkBacklog()
	p.checkMemory()
	p.checkFiles()
	if in.Sockets != nil && len(p.Refusals) == 0 {
		p.Stage = "sources"
		p.pickSources()
	}
	p.OK = len(p.Refusals) == 0
	if !p.OK {
		p.Sources = []Source{}
	}
	return p
}

// refuse adds a refusal: its code, the host, the setting to change and the
// sentence for people.
func (p *Plan) refuse(code, host, setting, format string, a ...any) {
	p.Refusals = append(p.Refusals, Refusal{Code: code, Host: host, Setting: setting, Message: fmt.Sprintf(format, a...)})
}

// fdFloor: a hard fd limit at or below it runs no scenario.
const fdFloor = FDMargin + FDFloor

// size computes the processes: server ones for the fd limit (with
// SO_REUSEPORT's slack), client ones for the fd limit and the ports.
func (p *Plan) size() {
	in := &p.Scenario
	srv, cli := &in.Server, &in.Client
	p.SharedHost = in.Lab == "netns" || in.Lab == "local"
	p.ServerFDHard, p.ClientFDHard = srv.FDHard, cli.FDHard
	p.PortsPerSource = cli.Ports()
	p.TWReusable = cli.TWReuse.Known && (cli.TWReuse.V == 1 || (cli.TWReuse.V == 2 && strings.HasPrefix(in.ServerIP, "127.")))
	p.MaxSources = len(Candidates(in))
	p.BacklogNeeded = ceil(in.ConnectRate*BacklogWindowMs, 1000)
	p.ServerKBPerConn, p.ClientKBPerConn, p.KernelKBPerConn = serverEstimate(in.ServerKind), KBPerConn["client_"+in.Kind], KBPerConn["kernel"]
	p.ServerProcs = 1
	if srv.FDHard.Known && srv.FDHard.V > fdFloor {
		p.ServerConnsPerProc = (srv.FDHard.V - FDMargin) * ReusePortSlackPct / 100
		p.ServerProcs = ceil(in.Conns, p.ServerConnsPerProc)
	}
	p.ClientProcsByFD, p.ClientProcsByPorts = 1, 1
	if cli.FDHard.Known && cli.FDHard.V > FDMargin {
		p.ClientProcsByFD = ceil(in.Conns, cli.FDHard.V-FDMargin)
	}
	if ports := p.PortsPerSource; ports.Known && ports.V > PortMargin {
		p.ClientProcsByPorts = ceil(in.Conns, ports.V-PortMargin)
		// connect() takes the even ports of the range first (Linux >= 4.6
		// leaves the odd ones to bind()); past them each connect scans
		// the whole even half before it tries an odd port, and the ramp
		// falls from thousands of connects a second to tens. So a source
		// address carries at most half the range when there are addresses
		// enough (measured: 14,116 of 28,232 at 835/s, then 20/s).
		if half := ports.V/2 - PortMargin; half > 0 && in.Kind != "active" {
			if fast := ceil(in.Conns, half); fast > p.ClientProcsByPorts && fast <= int64(p.MaxSources) {
				p.ClientProcsByPorts, p.FastPorts = fast, true
			} else if fast > p.ClientProcsByPorts {
				p.note(false, fmt.Sprintf("client ports: %d connections fill more than the even half of the port range (%d ports) of the %d source addresses: past it each connect scans for a free port and the ramp slows; more addresses (CLIENT_EXTRA_IPS) or a wider net.ipv4.ip_local_port_range keep it fast",
					in.Conns, ports.V/2, p.MaxSources))
			}
		}
	}
	p.ClientProcsNeeded = max(p.ClientProcsByFD, p.ClientProcsByPorts)
	if in.Kind == "active" {
		p.ClientProcsNeeded = 1 // wrk: one process
	}
	p.wantPortRange()
}

// wantPortRange asks for WidePortRange on the client when each source
// would carry more than FastPortsPct of the even half of its port range
// and the range is narrower: past ~80 % of the even half connect() slows
// (measured at C1M, 73 sources of 13,699 connections in 28,232 ports: the
// pace was cut from 69 connects/s a source to 19 at 11,983), and the wide
// range holds the same connections in fewer processes at ~60 %.
func (p *Plan) wantPortRange() {
	in := &p.Scenario
	ports := p.PortsPerSource
	if in.Kind == "active" || !ports.Known || ports.V >= WidePortHi-WidePortLo+1 || p.ClientProcsNeeded < 1 {
		return
	}
	if per := ceil(in.Conns, p.ClientProcsNeeded); per*100 > (ports.V/2)*FastPortsPct {
		p.PortRangeWanted = fmt.Sprintf("%d %d", WidePortLo, WidePortHi)
	}
}

// checkFDs: both hosts' hard fd limits, and wrk's single process.
func (p *Plan) checkFDs() {
	in := &p.Scenario
	srv, cli := &in.Server, &in.Client
	if srv.FDHard.Known && srv.FDHard.V <= fdFloor {
		p.refuse(CodeFDLimit, "server", "limits.conf nofile, LimitNOFILE",
			"the server's hard fd limit is %s: raise it (limits.conf nofile, LimitNOFILE) to run any C10K scenario; as root on the server host: echo '* hard nofile 1048576' > /etc/security/limits.d/csb.conf, then log in again", srv.FDHard)
	}
	if cli.FDHard.Known && cli.FDHard.V <= fdFloor {
		p.refuse(CodeFDLimit, "client", "ulimit -Hn, limits.conf nofile",
			"the client's hard fd limit is %s: raise it (ulimit -Hn as root, limits.conf nofile); as root: echo '* hard nofile 1048576' > /etc/security/limits.d/csb.conf, then log in again", cli.FDHard)
	}
	if in.Kind == "active" && cli.FDHard.Known && in.Conns+FDMargin > cli.FDHard.V {
		p.refuse(CodeFDLimit, "client", "ulimit -Hn, limits.conf nofile, or CONNS",
			"wrk opens all %d connections from one process: it needs %d fds, the client's hard limit is %d: raise it (ulimit -Hn, limits.conf nofile) or lower CONNS",
			in.Conns, in.Conns+FDMargin, cli.FDHard.V)
	}
}

// checkPorts: the port range, and the source addresses the connections
// need (one connclient process per address) against those available.
func (p *Plan) checkPorts() {
	in := &p.Scenario
	cli := &in.Client
	ports := p.PortsPerSource
	rangeText := fmt.Sprintf("net.ipv4.ip_local_port_range=%s-%s", cli.PortLo, cli.PortHi)
	if in.Kind == "active" && ports.Known && in.Conns+PortMargin > ports.V {
		p.refuse(CodeEphemeralPorts, "client", "net.ipv4.ip_local_port_range",
			"wrk connects from CLIENT_IP only: %d connections need more than the %d ports of %s: widen it on the client", in.Conns, ports.V, rangeText)
	}
	maxA := int64(p.MaxSources)
	switch {
	case ports.Known && ports.V <= PortMargin:
		p.refuse(CodeEphemeralPorts, "client", "net.ipv4.ip_local_port_range", "%s on the client leaves no ports: widen it (as root: sysctl -w net.ipv4.ip_local_port_range='1024 65535')", rangeText)
	case in.Kind == "active" || !cli.FDHard.Known || cli.FDHard.V <= fdFloor:
	case ports.Known && p.ClientProcsByPorts > maxA:
		p.refuse(CodeEphemeralPorts, "client", "CLIENT_EXTRA_IPS or net.ipv4.ip_local_port_range",
			"client ports: %d connections need %d source addresses of %d ports (%s), %d available: add addresses on CLIENT_NIC and list them in CLIENT_EXTRA_IPS, or widen the range",
			in.Conns, p.ClientProcsByPorts, ports.V, rangeText, maxA)
	case p.ClientProcsByFD > maxA:
		p.refuse(CodeFDLimit, "client", "ulimit -Hn, limits.conf nofile, or CLIENT_EXTRA_IPS",
			"client fd limit: %d connections need %d connclient processes (hard fd limit %d: %d connections each), one per source address, and %d source address(es) are available: raise the client's hard fd limit (ulimit -Hn, limits.conf nofile) or add addresses on CLIENT_NIC and list them in CLIENT_EXTRA_IPS",
			in.Conns, p.ClientProcsByFD, cli.FDHard.V, cli.FDHard.V-FDMargin, maxA)
	}
	if in.Kind == "lowrate" && in.RPS < p.ClientProcsNeeded {
		p.refuse(CodeRPSSplit, "client", "RPS", "RPS=%d is below the %d client processes it is split across: raise RPS", in.RPS, p.ClientProcsNeeded)
	}
}

// checkBacklog: the server's listen queues hold BacklogWindowMs of paced
// connects (wrk opens its connections at once: not checked).
func (p *Plan) checkBacklog() {
	in := &p.Scenario
	srv := &in.Server
	need := p.BacklogNeeded
	if in.Kind == "active" {
		return
	}
	if srv.Somaxconn.Known && srv.Somaxconn.V < need {
		p.refuse(CodeListenBacklog, "server", "net.core.somaxconn or CONNECT_RATE",
			"the server's net.core.somaxconn=%d cannot queue 100 ms of connects at CONNECT_RATE=%d/s (%d): raise it (as root on the server host: sysctl -w net.core.somaxconn=%d) or lower CONNECT_RATE",
			srv.Somaxconn.V, in.ConnectRate, need, need)
	}
	if srv.SynBacklog.Known && srv.SynBacklog.V < need && srv.Syncookies.Known && srv.Syncookies.V == 0 {
		p.refuse(CodeListenBacklog, "server", "net.ipv4.tcp_max_syn_backlog or CONNECT_RATE",
			"the server's net.ipv4.tcp_max_syn_backlog=%d (syncookies off) cannot hold 100 ms of SYNs at CONNECT_RATE=%d/s (%d): raise it (as root on the server host: sysctl -w net.ipv4.tcp_max_syn_backlog=%d) or lower CONNECT_RATE",
			srv.SynBacklog.V, in.ConnectRate, need, need)
	}
}

// serverEstimate is the server's estimated KiB per connection by kind.
func serverEstimate(kind string) int64 {
	if v, ok := KBPerConn["server_"+kind]; ok {
		return v
	}
	return KBPerConn["server_other"]
}

// checkMemory: the connections' memory against each host's MemAvailable
// (MemHeadroomPct of it may be planned), predicted from the cost a previous
// step measured, else from the estimates. With both ends on one machine
// it is one sum. A step after a smaller one, planned before the run, is
// only warned about: the smaller step's measure decides before it starts.
func (p *Plan) checkMemory() {
	in := &p.Scenario
	srvKB := in.Conns * (p.ServerKBPerConn + p.KernelKBPerConn/2)
	cliKB := in.Conns * (p.ClientKBPerConn + p.KernelKBPerConn/2)
	p.MemBasis = fmt.Sprintf("estimate (%s %d + client %d + kernel %d KiB a connection)", serverName(in.ServerKind), p.ServerKBPerConn, p.ClientKBPerConn, p.KernelKBPerConn)
	if c := in.Cost; c != nil && c.Conns > 0 {
		p.MemBasis = c.basis()
		if p.SharedHost {
			srvKB, cliKB = int64(c.ServerHostKB*float64(in.Conns)+0.5), 0
		} else {
			srvKB, cliKB = int64(c.ServerHostKB*float64(in.Conns)+0.5), int64(c.ClientHostKB*float64(in.Conns)+0.5)
		}
	}
	p.MemNeedKB = srvKB + cliKB
	as, ac := p.Facts.Server.MemAvailableKB, p.Facts.Client.MemAvailableKB
	refuse := func(host string, need int64, avail Num) {
		if !avail.Known {
			return
		}
		p.MemPlannableKB = known(avail.V * MemHeadroomPct / 100)
		if need <= p.MemPlannableKB.V {
			return
		}
		where := map[string]string{"both": "this machine (both ends)", "server": "the server", "client": "the client"}[host]
		msg := fmt.Sprintf("memory: %d connections need about %d MiB on %s, by the %s; %d MiB are available and %d %% of it, %d MiB, may be planned",
			in.Conns, need/1024, where, p.MemBasis, avail.V/1024, MemHeadroomPct, p.MemPlannableKB.V/1024)
		if in.AfterStep && in.Cost == nil {
			p.note(false, msg+": checked again from the measured cost of the step before it, which will likely refuse it")
			return
		}
		p.refuse(CodeMemory, host, "CONNS", "%s: lower CONNS", msg)
	}
	if p.SharedHost {
		refuse("both", srvKB+cliKB, ac)
	} else {
		refuse("server", srvKB, as)
		refuse("client", cliKB, ac)
	}
	p.checkTCPMem()
}

// checkTCPMem: the kernel's TCP buffer pages with every connection held,
// predicted from the step measured before (tcp_mem is global: both ends on
// one machine add up), against net.ipv4.tcp_mem's max (connections fail
// past it) and its pressure threshold (noted).
func (p *Plan) checkTCPMem() {
	in, c := &p.Scenario, p.Scenario.Cost
	srv := &p.Facts.Server
	if c == nil || !c.TCPMemKB.Known || !srv.TCPMemMax.Known || !srv.PageKB.Known || srv.PageKB.V <= 0 {
		return
	}
	pages := int64(max(c.TCPMemKB.V, 0)*float64(in.Conns)/float64(srv.PageKB.V) + 0.5)
	p.TCPMemPages = known(pages)
	switch {
	case pages > srv.TCPMemMax.V:
		p.refuse(CodeTCPMem, "server", "CONNS or net.ipv4.tcp_mem",
			"tcp_mem: %d connections would hold about %d pages of TCP buffers (%.2f KiB a connection, measured at %s), above net.ipv4.tcp_mem's max %d: lower CONNS, or raise it (as root on the server host: sysctl -w net.ipv4.tcp_mem=...)",
			in.Conns, pages, c.TCPMemKB.V, c.From, srv.TCPMemMax.V)
	case srv.TCPMemPressure.Known && pages > srv.TCPMemPressure.V:
		p.note(false, fmt.Sprintf("tcp_mem: about %d pages of TCP buffers predicted, above the pressure threshold %d: the kernel will trim buffers", pages, srv.TCPMemPressure.V))
	}
}

func serverName(kind string) string {
	if kind == "" {
		return "server"
	}
	return "server " + kind
}

// ExitCode is the runner's exit status for a plan refused before the run:
// ExitTooLarge when a refusal is one only a smaller CONNS cures (memory,
// files), else ExitRefused; 0 when it is ok.
func (p *Plan) ExitCode() int {
	if p.OK {
		return 0
	}
	for _, r := range p.Refusals {
		if r.Code == CodeMemory || r.Code == CodeFileMax {
			return ExitTooLarge
		}
	}
	return ExitRefused
}

func (p *Plan) checkFiles() {
	conns := p.Scenario.Conns
	s, c := &p.Facts.Server, &p.Facts.Client
	if p.SharedHost {
		if c.FilesOpen.Known && c.FilesMax.Known && c.FilesOpen.V+2*conns >= c.FilesMax.V {
			p.refuse(CodeFileMax, "both", "fs.file-max", "fs.file-max=%d with %d files open cannot take %d more (both ends on this machine): raise fs.file-max (as root: sysctl -w fs.file-max=%d)",
				c.FilesMax.V, c.FilesOpen.V, 2*conns, 2*(c.FilesOpen.V+2*conns))
		}
		return
	}
	if s.FilesOpen.Known && s.FilesMax.Known && s.FilesOpen.V+conns >= s.FilesMax.V {
		p.refuse(CodeFileMax, "server", "fs.file-max", "the server's fs.file-max=%d with %d files open cannot take %d more: raise fs.file-max there (as root on the server host: sysctl -w fs.file-max=%d)",
			s.FilesMax.V, s.FilesOpen.V, conns, 2*(s.FilesOpen.V+conns))
	}
	if c.FilesOpen.Known && c.FilesMax.Known && c.FilesOpen.V+conns >= c.FilesMax.V {
		p.refuse(CodeFileMax, "client", "fs.file-max", "the client's fs.file-max=%d with %d files open cannot take %d more: raise fs.file-max (as root: sysctl -w fs.file-max=%d)",
			c.FilesMax.V, c.FilesOpen.V, conns, 2*(c.FilesOpen.V+conns))
	}
}
