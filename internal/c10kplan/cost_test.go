package c10kplan

import (
	"strings"
	"testing"
)

// C1M on one machine (the netns lab's facts at C100K: fd limit 20000,
// 28232 ports, 23.9 GB available): nginx fits by its estimate; the
// reference server's first step of 1m does not, and is refused with the
// figures and exit 2; after a smaller step the estimate only warns, and the
// measured cost decides.
func TestC1MMemory(t *testing.T) {
	in := func(kind string, conns int64) Input {
		return Input{Kind: "idle", Conns: conns, ConnectRate: 5000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
			ClientIP: "198.18.0.2", ClientNIC: "csbc0", TWThreshold: 500, ServerKind: kind,
			Server: c100kFacts(t, "server", "mem_available_kb=23000000"), Client: c100kFacts(t, "client", "mem_available_kb=23000000")}
	}
	p := Compute(in("nginx", 1_000_000))
	if !p.OK || p.ServerProcs < 51 || p.ClientProcsNeeded < 51 || p.ClientProcsByPorts < 36 {
		t.Fatalf("nginx 1m: ok=%v server %d client %d (by ports %d); refusals %+v", p.OK, p.ServerProcs, p.ClientProcsNeeded, p.ClientProcsByPorts, p.Refusals)
	}
	if p.MemNeedKB != 1_000_000*(4+4+8) || !strings.HasPrefix(p.MemBasis, "estimate") {
		t.Errorf("nginx 1m: need %d KiB by %q", p.MemNeedKB, p.MemBasis)
	}

	p = Compute(in("csb", 1_000_000))
	if p.OK || p.Code() != CodeMemory || p.ExitCode() != ExitTooLarge {
		t.Fatalf("csb 1m first step: ok=%v code %q exit %d", p.OK, p.Code(), p.ExitCode())
	}
	for _, want := range []string{"1000000 connections need about 35156 MiB", "22460 MiB are available", "20214 MiB, may be planned", "lower CONNS"} {
		if !strings.Contains(p.Refusal(), want) {
			t.Errorf("refusal %q lacks %q", p.Refusal(), want)
		}
	}

	after := in("csb", 1_000_000)
	after.AfterStep = true
	if p = Compute(after); !p.OK || !strings.Contains(p.Note(), "will likely refuse it") {
		t.Errorf("csb 1m after a smaller step: ok=%v notes %q", p.OK, p.Note())
	}

	// Measured at 100k: 27 KiB a connection on this machine: 1m is refused
	// before it starts, with what was measured; 700k fits.
	measured := &Cost{From: "idle-100k", Conns: 100000, ServerHostKB: 27, TCPMemKB: Float{V: 0.02, Known: true}}
	after.Cost = measured
	if p = Compute(after); p.OK || p.Code() != CodeMemory || !strings.Contains(p.Refusal(), "measured at idle-100k (MemAvailable fell 27.0 KiB") {
		t.Errorf("csb 1m measured: ok=%v %q", p.OK, p.Refusal())
	}
	small := in("csb", 700_000)
	small.Cost = measured
	if p = Compute(small); !p.OK || p.MemNeedKB != 700_000*27 {
		t.Errorf("csb 700k measured: ok=%v need %d refusals %+v", p.OK, p.MemNeedKB, p.Refusals)
	}

	// tcp_mem: a cost of a page a connection (the FIN of a connection the
	// server closed, queued) is past the kernel's max at 1m.
	tm := in("nginx", 1_000_000)
	tm.Server = c100kFacts(t, "server", "net.ipv4.tcp_mem=287892 383858 575784", "pagesize=4096", "mem_available_kb=23000000")
	tm.Cost = &Cost{From: "idle-100k", Conns: 100000, ServerHostKB: 10, TCPMemKB: Float{V: 4, Known: true}}
	if p = Compute(tm); p.OK || p.Code() != CodeTCPMem || p.ExitCode() != ExitRefused || !p.TCPMemPages.Known || p.TCPMemPages.V != 1_000_000 {
		t.Errorf("tcp_mem: ok=%v code %q exit %d pages %v: %q", p.OK, p.Code(), p.ExitCode(), p.TCPMemPages, p.Refusal())
	}
	tm.Cost.TCPMemKB.V = 0.02
	if p = Compute(tm); !p.OK || p.TCPMemPages.V != 5000 {
		t.Errorf("tcp_mem at 0.02 KiB: ok=%v pages %v %+v", p.OK, p.TCPMemPages, p.Refusals)
	}
}

// c100kTimeWait: a scenario on the C100K hosts' facts (netns, nginx) whose
// CLIENT_IP, 198.18.0.2, has tw sockets in TIME_WAIT toward the server.
func c100kTimeWait(t *testing.T, kind string, conns int64, tw int) Input {
	return Input{Kind: kind, Conns: conns, ConnectRate: 5000, Lab: "netns", ServerIP: "198.18.0.1", ServerPort: 8080,
		ClientIP: "198.18.0.2", ClientNIC: "csbc0", TWThreshold: 500, ServerKind: "nginx",
		Server: c100kFacts(t, "server"), Client: c100kFacts(t, "client"),
		Sockets: timeWait("198.18.0.2", tw), Present: map[string]bool{"198.18.0.2": true}}
}

// With each source planned on the even half of its ports, an address
// whose earlier sockets (TIME_WAIT) hold most of that half is passed over,
// though the whole range would still have room: its connects would crawl.
func TestFastPortsSkipTimeWait(t *testing.T) {
	p := Compute(c100kTimeWait(t, "idle", 100000, 12500))
	if !p.OK || !p.FastPorts || len(p.Sources) != 8 {
		t.Fatalf("ok=%v fast=%v %d sources; %+v", p.OK, p.FastPorts, len(p.Sources), p.Refusals)
	}
	for _, s := range p.Sources {
		if s.IP == "198.18.0.2" {
			t.Errorf("picked 198.18.0.2 with 12500 of its 14116 even ports in TIME_WAIT")
		}
	}
}

// wrk connects from CLIENT_IP alone: when that address's TIME_WAIT from a
// run before holds the even ports connect() takes first, the plan waits
// for it to drain once (then goes on, naming it); with room left in the
// even half it does not wait.
func TestActiveWaitsOutTimeWaitOnEvenPorts(t *testing.T) {
	in := c100kTimeWait(t, "active", 10000, 9553)
	p := Compute(in)
	if p.OK || p.Code() != CodeTimeWait || !p.RetryAfterTimeWait || !strings.Contains(p.Refusal(), "9553 sockets in TIME_WAIT") {
		t.Fatalf("ok=%v code %q retry=%v: %q", p.OK, p.Code(), p.RetryAfterTimeWait, p.Refusal())
	}
	in.TWWaited = true
	if p = Compute(in); !p.OK || len(p.Sources) != 1 || p.Sources[0].IP != "198.18.0.2" {
		t.Fatalf("after the wait: ok=%v %+v %+v", p.OK, p.Sources, p.Refusals)
	}
	in.TWWaited, in.Sockets = false, timeWait("198.18.0.2", 3000)
	if p = Compute(in); !p.OK || p.RetryAfterTimeWait {
		t.Fatalf("3000 in TIME_WAIT: ok=%v retry=%v %+v", p.OK, p.RetryAfterTimeWait, p.Refusals)
	}
}
