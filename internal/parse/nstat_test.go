package parse

import (
	"strings"
	"testing"
)

func TestParseNstat(t *testing.T) {
	n, err := ParseNstat(open(t, "nstat-before.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(n) < 300 {
		t.Errorf("%d counters, want the ~400 that nstat 6.1 prints", len(n))
	}
	// -z keeps zeros: "IpInHdrErrors":0 is present, not absent.
	if v, ok := n["IpInHdrErrors"]; !ok || v != 0 {
		t.Errorf("IpInHdrErrors = %d, %v", v, ok)
	}
	// Not counters: nstat leaves them out.
	for _, name := range []string{"TcpMaxConn", "TcpCurrEstab", "TcpRtoMin"} {
		if _, ok := n[name]; ok {
			t.Errorf("%s present", name)
		}
	}
	for _, name := range TCPHealthCounters {
		if _, ok := n[name]; !ok {
			t.Errorf("TCPHealthCounters names %s, which this kernel's nstat does not print", name)
		}
	}
}

func TestNstatDelta(t *testing.T) {
	// Between the two snapshots: wrk -c20 against a server on loopback, the
	// server killed, three curls to the closed port, and ten connects to a
	// listen(1) socket that never accepted.
	before, err := ParseNstat(open(t, "nstat-before.json"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := ParseNstat(open(t, "nstat-after.json"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := NstatDelta(before, after, TCPHealthCounters...)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{
		"TcpAttemptFails":       3,
		"TcpExtListenOverflows": 16,
		"TcpExtListenDrops":     16,
		"TcpExtTCPSynRetrans":   8,
		"TcpRetransSegs":        8,
		"TcpEstabResets":        19,
		"TcpOutRsts":            19,
		"TcpExtTCPAbortOnData":  11,
		"TcpExtTCPAbortOnClose": 3,
		"TcpExtTCPTimeouts":     8,
		"TcpExtTW":              8,
		"TcpExtTWKilled":        0,
	} {
		if got, ok := d[name]; !ok || got != want {
			t.Errorf("delta %s = %d (present %v), want %d", name, got, ok, want)
		}
	}
	if len(d) != len(TCPHealthCounters) {
		t.Errorf("%d deltas, want %d", len(d), len(TCPHealthCounters))
	}
	all, err := NstatDelta(before, after)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(after) {
		t.Errorf("all deltas: %d, want %d", len(all), len(after))
	}
}

func TestNstatDeltaAbsentIsNotZero(t *testing.T) {
	d, err := NstatDelta(Nstat{"A": 1}, Nstat{"A": 3, "B": 5}, "A", "B", "C")
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 1 || d["A"] != 2 {
		t.Errorf("d = %v, want only A = 2", d)
	}
}

func TestNstatDeltaWentDown(t *testing.T) {
	before, _ := ParseNstat(open(t, "nstat-before.json"))
	after, _ := ParseNstat(open(t, "nstat-after.json"))
	// Swapped: as after a reboot between the snapshots.
	_, err := NstatDelta(after, before, "TcpExtListenOverflows")
	wantErrContains(t, err, "counters went down")
	wantErrContains(t, err, "TcpExtListenOverflows")
}

func TestParseNstatBadInput(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"text", "#kernel\nIpInReceives 1039716 0.0\n", "not nstat -j output"},
		{"no kernel", `{"other": {"A": 1}}`, `no "kernel"`},
		{"negative", `{"kernel": {"TcpMaxConn": -1}}`, "TcpMaxConn = -1: not a counter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseNstat(strings.NewReader(c.in))
			wantErrContains(t, err, c.err)
		})
	}
}
