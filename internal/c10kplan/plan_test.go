package c10kplan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
)

// facts reads testdata/limits.{server,client}.env (a real netns run's, see
// testdata/README.md) and applies edits ("key=value" lines override).
func facts(t *testing.T, host string, edits ...string) Host {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "limits."+host+".env"))
	if err != nil {
		t.Fatal(err)
	}
	return ParseFacts(string(b) + strings.Join(edits, "\n") + "\n")
}

// timeWait is `ss` output with n TIME_WAIT sockets from ip toward the server.
func timeWait(ip string, n int) *Sockets {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "TIME-WAIT 0      0      %s:%d 198.18.0.1:8080\n", ip, 30000+i)
	}
	s, _ := ReadSockets(strings.NewReader(b.String()), false)
	return s
}

func netnsInput(t *testing.T) Input {
	return Input{Kind: "idle", Conns: 800, ConnectRate: 1000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
		ClientIP: "198.18.0.2", ClientNIC: "csbc0", TWThreshold: 500,
		Server: facts(t, "server"), Client: facts(t, "client")}
}

// Plans on recorded host facts: the document is golden; a refusal carries
// its code and the setting to change.
func TestPlans(t *testing.T) {
	cases := []struct {
		name, code string
		edit       func(in *Input)
	}{
		// Server hard fd limit 700: two server processes; 198.18.0.2 busy
		// with 600 sockets in TIME_WAIT: the netns lab adds 198.18.0.3.
		{"split-add", "", func(in *Input) {
			in.Sockets = timeWait("198.18.0.2", 600)
			in.Present = map[string]bool{"198.18.0.2": true}
		}},
		{"preflight-wrk-fds", CodeFDLimit, func(in *Input) { in.Kind, in.Conns = "active", 2000 }},
		{"preflight-backlog", CodeListenBacklog, func(in *Input) { in.ConnectRate = 100000 }},
		{"preflight-memory", CodeMemory, func(in *Input) { in.Client = facts(t, "client", "mem_available_kb=10000") }},
		{"preflight-file-max", CodeFileMax, func(in *Input) { in.Client = facts(t, "client", "fs.file-nr=642 0 2000") }},
		{"preflight-wrk-ports", CodeEphemeralPorts, func(in *Input) {
			in.Kind, in.Conns = "active", 900
			in.Client = facts(t, "client", "net.ipv4.ip_local_port_range=40000 40999")
		}},
		{"preflight-rps", CodeRPSSplit, func(in *Input) {
			in.Kind, in.RPS = "lowrate", 1
			in.Client = facts(t, "client", "fd_hard=300")
		}},
		// ssh, one address, held by TIME_WAIT: wait first, then refuse.
		{"sources-time-wait", CodeTimeWait, func(in *Input) {
			in.Lab, in.TWWaited = "ssh", true
			in.Sockets = timeWait("198.18.0.2", 28000)
		}},
		// A non-root user reads no fs.file-nr and an empty fd limit: the
		// plan says so and does not refuse on them.
		{"unreadable", "", func(in *Input) {
			in.Client = facts(t, "client", "fs.file-nr=", "fd_hard=", "net.ipv4.tcp_tw_reuse=")
			in.Server = facts(t, "server", "fs.file-nr=", "net.core.somaxconn=")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := netnsInput(t)
			c.edit(&in)
			p := ComputeHosts(in, nil)
			if p.Code() != c.code || p.OK != (c.code == "") {
				t.Fatalf("ok=%v code %q, want %q; refusals %+v", p.OK, p.Code(), c.code, p.Refusals)
			}
			for _, r := range p.Refusals {
				if r.Message == "" || r.Setting == "" || r.Host == "" {
					t.Errorf("refusal without a sentence, host or setting: %+v", r)
				}
			}
			b, err := MarshalIndent(p)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, c.name+".plan.json", string(b))
		})
	}
}

func TestSplitAddDetails(t *testing.T) {
	in := netnsInput(t)
	in.Sockets = timeWait("198.18.0.2", 600)
	in.Present = map[string]bool{"198.18.0.2": true}
	p := Compute(in)
	if p.ServerProcs != 2 || p.ServerConnsPerProc != 572 {
		t.Errorf("server: %d processes of %d, want 2 of 572 (90 %% of 700 - 64)", p.ServerProcs, p.ServerConnsPerProc)
	}
	if len(p.Sources) != 1 || p.Sources[0].IP != "198.18.0.3" || !p.Sources[0].Add || p.Sources[0].Connections != 800 {
		t.Errorf("sources %+v, want 198.18.0.3 added, 800 connections", p.Sources)
	}
}

func TestUnreadableIsNotZero(t *testing.T) {
	h := ParseFacts("fd_hard=\nfs.file-nr=\nnet.core.somaxconn=4096\nnet.ipv4.ip_local_port_range=32768 60999\n")
	if h.FDHard.Known || h.FilesMax.Known || !h.Somaxconn.Known || h.Ports().V != 28232 {
		t.Fatalf("facts %+v", h)
	}
	b, _ := MarshalIndent(h)
	if !strings.Contains(string(b), `"fd_hard": "unreadable"`) || !strings.Contains(string(b), `"files_max": "unreadable"`) {
		t.Errorf("JSON:\n%s", b)
	}
	var n Num
	if err := n.UnmarshalJSON([]byte(`"unreadable"`)); err != nil || n.Known {
		t.Errorf("unreadable round trip: %v %+v", err, n)
	}
	if ParseFacts("fd_hard=unlimited\n").FDHard.V != Unlimited {
		t.Error("unlimited")
	}
}

func TestReadChecksVersion(t *testing.T) {
	dir := t.TempDir()
	p := Compute(netnsInput(t))
	path := filepath.Join(dir, "x.plan.json")
	if err := Write(path, p); err != nil {
		t.Fatal(err)
	}
	if q, err := Read(path); err != nil || q.ServerProcs != p.ServerProcs {
		t.Fatalf("read back: %v", err)
	}
	p.SchemaVersion = 2
	if err := Write(path, p); err != nil {
		t.Fatal(err)
	}
	_, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "schema_version 2, this csb reads version 1") {
		t.Errorf("err %v", err)
	}
}

func TestReadAddrs(t *testing.T) {
	j := `[{"ifindex":2,"ifname":"csbc0","addr_info":[{"family":"inet","local":"198.18.0.2","prefixlen":24},{"family":"inet","local":"198.18.0.3","prefixlen":24}]}]`
	m, err := ReadAddrs(strings.NewReader(j))
	if err != nil || !m["198.18.0.2"] || !m["198.18.0.3"] || len(m) != 2 {
		t.Errorf("%v %v", m, err)
	}
	if _, err := ReadAddrs(strings.NewReader("2: csbc0 inet 198.18.0.2/24")); err == nil {
		t.Error("text accepted")
	}
}

// c100kHost is a client host with the lab machine's recorded facts
// (hard fd limit 20000), its sockets toward the server empty (a fresh
// host) and its addresses present.
func c100kHost(t *testing.T, name, ip string, extra []string, edits ...string) ClientHost {
	present := map[string]bool{ip: true}
	for _, e := range extra {
		present[e] = true
	}
	s, _ := ReadSockets(strings.NewReader(""), false)
	return ClientHost{Name: name, IP: ip, NIC: "eth1", ExtraIPs: extra, Facts: c100kFacts(t, "client", edits...),
		Sockets: s, Present: present}
}

func c100kFacts(t *testing.T, host string, edits ...string) Host {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "limits-c100k."+host+".env"))
	if err != nil {
		t.Fatal(err)
	}
	return ParseFacts(string(b) + strings.Join(edits, "\n") + "\n")
}

// C100K on the lab machine's facts, on one client host (the netns lab adds
// its addresses) and on two (LAB=ssh, each with its own addresses): the
// documents are golden; the counts are checked here too.
func TestPlansC100K(t *testing.T) {
	base := func(kind string, rps int64) Input {
		return Input{Kind: kind, Conns: 100000, RPS: rps, ConnectRate: 2000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
			TWThreshold: 500, Server: c100kFacts(t, "server")}
	}
	two := func(t *testing.T, edits ...string) []ClientHost {
		return []ClientHost{
			c100kHost(t, "root@cli1", "198.18.0.2", []string{"198.18.0.12", "198.18.0.13"}),
			c100kHost(t, "root@cli2", "198.18.0.3", []string{"198.18.0.22", "198.18.0.23"}, edits...),
		}
	}
	cases := []struct {
		name, code               string
		in                       Input
		hosts                    func(t *testing.T) []ClientHost
		serverProcs, clientProcs int64
		perHost                  []int64 // client processes per host
	}{
		{"c100k-idle", "", base("idle", 0), func(t *testing.T) []ClientHost {
			return []ClientHost{c100kHost(t, "local", "198.18.0.2", nil)}
		}, 6, 8, []int64{8}},
		{"c100k-lowrate", "", base("lowrate", 5000), func(t *testing.T) []ClientHost {
			return []ClientHost{c100kHost(t, "local", "198.18.0.2", nil)}
		}, 6, 8, []int64{8}},
		{"hosts-2-c100k", "", func() Input { in := base("lowrate", 5000); in.Lab = "ssh"; return in }(), func(t *testing.T) []ClientHost {
			return two(t)
		}, 6, 6, []int64{3, 3}},
		// The second host's fd limit is lower: it needs more addresses
		// than it has; the refusal names the host and the setting.
		{"hosts-2-refused", CodeFDLimit, func() Input { in := base("idle", 0); in.Lab = "ssh"; return in }(), func(t *testing.T) []ClientHost {
			return two(t, "fd_hard=10000")
		}, 6, 9, []int64{3, 6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ComputeHosts(c.in, c.hosts(t))
			if p.Code() != c.code || p.OK != (c.code == "") {
				t.Fatalf("ok=%v code %q, want %q; refusals %+v", p.OK, p.Code(), c.code, p.Refusals)
			}
			if p.ServerProcs != c.serverProcs || p.ClientProcsNeeded != c.clientProcs {
				t.Errorf("processes: server %d client %d, want %d and %d", p.ServerProcs, p.ClientProcsNeeded, c.serverProcs, c.clientProcs)
			}
			total := int64(0)
			for i, h := range p.Hosts {
				if h.Procs != c.perHost[i] {
					t.Errorf("host %s: %d processes, want %d", h.Name, h.Procs, c.perHost[i])
				}
			}
			for _, s := range p.Sources {
				total += s.Connections
				if s.Host == "" {
					t.Errorf("source %s names no host", s.IP)
				}
			}
			if p.OK && total != c.in.Conns {
				t.Errorf("sources carry %d connections, want %d", total, c.in.Conns)
			}
			for _, r := range p.Refusals {
				if !strings.Contains(r.Message, "root@cli2") || r.Host != "client root@cli2" || r.Setting == "" {
					t.Errorf("refusal does not name the host and setting: %+v", r)
				}
			}
			b, err := MarshalIndent(p)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, c.name+".plan.json", string(b))
		})
	}
}

// Two netns client hosts whose own addresses are all that is present: the
// plan adds addresses on each host, and its notes name exactly the
// addresses its sources add (none of a whole-scenario plan of the first
// host).
func TestHostsNetnsAddNotes(t *testing.T) {
	in := Input{Kind: "lowrate", Conns: 100000, RPS: 5000, ConnectRate: 2000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
		TWThreshold: 500, Server: c100kFacts(t, "server")}
	hosts := []ClientHost{c100kHost(t, "client1", "198.18.0.2", nil), c100kHost(t, "client2", "198.18.2.2", nil)}
	p := ComputeHosts(in, hosts)
	if !p.OK {
		t.Fatalf("refused: %+v", p.Refusals)
	}
	added := map[string]bool{}
	for _, s := range p.Sources {
		if s.Add {
			added[s.IP] = true
		}
		if want := map[string]string{"client1": "198.18.0.", "client2": "198.18.2."}[s.Host]; !strings.HasPrefix(s.IP, want) {
			t.Errorf("source %s on %s: not in that host's range %s*", s.IP, s.Host, want)
		}
	}
	n := 0
	for _, note := range p.Notes {
		if i := strings.Index(note, "added "); i >= 0 {
			n++
			ip := strings.Fields(note[i+len("added "):])[0]
			if !added[ip] {
				t.Errorf("note %q names an address no source adds", note)
			}
		}
	}
	if n != len(added) || n == 0 {
		t.Errorf("%d notes of added addresses, %d added: %v", n, len(added), p.Notes)
	}
}

// C1M on the lab machine's facts: 28,232 ports make 73 sources of 13,699
// connections, 97 % of the range's even half, so the plan asks for the wide
// range; on it the fd limit sets the sources (51, 61 % each) and the plan
// asks for nothing. 20k on two sources (71 %) asks for nothing either.
func TestPortRangeWanted(t *testing.T) {
	in := func(conns int64) Input {
		return Input{Kind: "lowrate", Conns: conns, RPS: 10000, ConnectRate: 5000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
			TWThreshold: 500, Server: c100kFacts(t, "server")}
	}
	wide := fmt.Sprintf("net.ipv4.ip_local_port_range=%d %d", WidePortLo, WidePortHi)
	for _, c := range []struct {
		conns int64
		edits []string
		want  string
		procs int64
	}{
		{1000000, nil, "1024 65535", 73},
		{1000000, []string{wide}, "", 51},
		{20000, nil, "", 2},
	} {
		p := ComputeHosts(in(c.conns), []ClientHost{c100kHost(t, "local", "198.18.0.2", nil, c.edits...)})
		if p.PortRangeWanted != c.want || p.ClientProcsNeeded != c.procs {
			t.Errorf("%d connections %v: range wanted %q with %d processes, want %q with %d", c.conns, c.edits,
				p.PortRangeWanted, p.ClientProcsNeeded, c.want, c.procs)
		}
	}
}

// TestSplitStreams: an active scenario over HTTP/2 is planned on its
// connections, requests in flight / streams; anything else is refused.
func TestSplitStreams(t *testing.T) {
	in := Input{Kind: "active", Conns: 10000}
	if err := in.SplitStreams(100); err != nil || in.Conns != 100 || in.Streams != 100 || in.InFlight != 10000 {
		t.Errorf("10k in flight, 100 streams: %+v, %v; want 100 connections", in, err)
	}
	one := Input{Kind: "active", Conns: 10000}
	if err := one.SplitStreams(0); err != nil || one.Conns != 10000 || one.Streams != 0 {
		t.Errorf("HTTP/1.1: %+v, %v; want it unchanged", one, err)
	}
	for _, c := range []struct {
		in      Input
		streams int64
		want    string
	}{
		{Input{Kind: "active", Conns: 10000}, 3, "3 streams per connection do not divide 10000 requests in flight"},
		{Input{Kind: "idle", Conns: 10000}, 10, "streams per connection are the active scenario's, not idle's"},
	} {
		if err := c.in.SplitStreams(c.streams); err == nil || err.Error() != c.want {
			t.Errorf("%+v / %d: %v, want %q", c.in, c.streams, err, c.want)
		}
	}
}

// A client fact unreadable on one of two hosts is that host's note, named
// by it, and not the whole plan's: the plan marks the notes about the
// client host, it does not match their words.
func TestHostsClientNotesByHost(t *testing.T) {
	in := Input{Kind: "lowrate", Conns: 20000, RPS: 1000, ConnectRate: 2000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
		TWThreshold: 500, Server: c100kFacts(t, "server")}
	h2 := c100kHost(t, "client2", "198.18.2.2", nil)
	h2.Facts.Unreadable = append(h2.Facts.Unreadable, "somaxconn")
	p := ComputeHosts(in, []ClientHost{c100kHost(t, "client1", "198.18.0.2", nil), h2})
	var got []string
	for _, n := range p.Notes {
		if strings.Contains(n, "unreadable") {
			got = append(got, n)
		}
	}
	want := "client host client2: the client's somaxconn was unreadable: what depends on it was not checked"
	if len(got) != 1 || got[0] != want {
		t.Errorf("notes of the unreadable fact = %q, want [%q]", got, want)
	}
	if len(p.ClientNotes) != len(p.Notes) {
		t.Errorf("%d marks for %d notes", len(p.ClientNotes), len(p.Notes))
	}
}
