package parse

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSadfLoad(t *testing.T) {
	// sar -o FILE 1 while wrk loaded a server on loopback, stopped by SIGINT;
	// then sadf -j FILE -- -n DEV,TCP,ETCP,SOCK -u -r.
	rep, err := ParseSadf(open(t, "sadf-load.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated || rep.Nodename != "vm" || rep.NumCPUs != 2 || len(rep.Samples) != 6 {
		t.Fatalf("Truncated = %v, %q, %d CPUs, %d samples", rep.Truncated, rep.Nodename, rep.NumCPUs, len(rep.Samples))
	}
	s := rep.Samples[1]
	if !s.Time.Equal(utc("2026-11-30T07:21:55Z")) || s.IntervalS != 1 {
		t.Errorf("time = %v, interval %d", s.Time, s.IntervalS)
	}
	// {"cpu": "all", "user": 54.77, "nice": 0.00, "system": 44.72, "iowait": 0.00, "steal": 0.00, "idle": 0.50}
	if len(s.CPUs) != 1 || s.CPUs[0].CPU != "all" || s.CPUs[0].IdlePercent != 0.5 {
		t.Fatalf("CPUs = %+v", s.CPUs)
	}
	c := s.CPUs[0]
	wantFloat(t, "UserPercent", c.UserPercent, 54.77, 0)
	wantFloat(t, "SystemPercent", c.SystemPercent, 44.72, 0)
	wantNil(t, "UsrPercent", c.UsrPercent)
	wantNil(t, "SoftPercent", c.SoftPercent)
	if m := s.Memory; m == nil || m.UsedKB != 192224 || m.FreeKB != 24018820 || m.AvailKB != 24215772 || m.UsedPercent != 0.78 || m.DirtyKB != 62472 {
		t.Errorf("Memory = %+v", s.Memory)
	}
	lo, ok := s.Interface("lo")
	if !ok || lo.RxPckPerS != 82624 || lo.TxPckPerS != 82624 || lo.RxKBPerS != 10727.47 || lo.TxKBPerS != 10727.47 {
		t.Errorf("lo = %+v, %v", lo, ok)
	}
	if len(s.NetDev) != 4 {
		t.Errorf("%d interfaces, want 4 (lo, ifb0, ifb1, eth0)", len(s.NetDev))
	}
	if k := s.Sock; k == nil || *k != (SadfSock{TotSck: 30, TCPSck: 19, TCPTW: 15}) {
		t.Errorf("Sock = %+v", s.Sock)
	}
	if p := s.TCP; p == nil || *p != (SadfTCP{ActiveOpensPerS: 9, PassiveOpensPerS: 9, InSegsPerS: 82624, OutSegsPerS: 82624}) {
		t.Errorf("TCP = %+v", s.TCP)
	}
	// wrk's 8 connections closed at 07:21:58: "estres": 14.00, "orsts": 7.00.
	if e := rep.Samples[4].ETCP; e == nil || *e != (SadfETCP{EstabResetsPerS: 14, OutRstsPerS: 7}) {
		t.Errorf("ETCP = %+v", rep.Samples[4].ETCP)
	}
}

func TestSadfWindowHelpers(t *testing.T) {
	rep, err := ParseSadf(open(t, "sadf-load.json"))
	if err != nil {
		t.Fatal(err)
	}
	w := Window{From: utc("2026-11-30T07:21:55Z"), To: utc("2026-11-30T07:21:57Z")}
	rx := func(d SadfNetDev) float64 { return d.RxKBPerS }
	got, err := rep.MeanNetDev(w, "lo", rx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (10727.47 + 15884.41 + 14598.19) / 3; !approx(got, want, 1e-9) {
		t.Errorf("MeanNetDev(lo rxkB) = %v, want %v", got, want)
	}
	if _, err := rep.MeanNetDev(w, "eth9", rx); !errors.Is(err, ErrNoSamples) {
		t.Errorf("unknown interface: err = %v", err)
	}
	// idle 0.50, 0.00, 0.00
	if got, err := rep.MeanCPUBusyPercent(w, "all"); err != nil || !approx(got, (99.5+100+100)/3, 1e-9) {
		t.Errorf("MeanCPUBusyPercent = %v, %v", got, err)
	}
	tw, err := rep.Mean(w, func(s SadfSample) (float64, bool) {
		if s.Sock == nil {
			return 0, false
		}
		return float64(s.Sock.TCPTW), true
	})
	if err != nil || tw != 15 {
		t.Errorf("mean tcp-tw = %v, %v", tw, err)
	}
	none := Window{From: utc("2026-11-30T09:00:00Z"), To: utc("2026-11-30T09:00:01Z")}
	if _, err := rep.MeanCPUBusyPercent(none, "all"); !errors.Is(err, ErrNoSamples) {
		t.Errorf("empty window: err = %v", err)
	}
}

func TestParseSadfAllCPUs(t *testing.T) {
	// The same file read with -u ALL -P ALL -r ALL.
	rep, err := ParseSadf(open(t, "sadf-load-all.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Samples[1]
	if len(s.CPUs) != 3 || s.CPUs[1].CPU != "0" {
		t.Fatalf("CPUs = %+v", s.CPUs)
	}
	// {"cpu": "all", "usr": 54.77, "nice": 0.0, "sys": 36.18, ... "soft": 8.54, ... "idle": 0.5}
	all := s.CPUs[0]
	wantFloat(t, "UsrPercent", all.UsrPercent, 54.77, 0)
	wantFloat(t, "SysPercent", all.SysPercent, 36.18, 0)
	wantFloat(t, "SoftPercent", all.SoftPercent, 8.54, 0)
	wantNil(t, "UserPercent", all.UserPercent)
	// -u's %system is -u ALL's %sys + %irq + %soft: 44.72 = 36.18 + 0 + 8.54.
	if !approx(*all.SysPercent+*all.IRQPercent+*all.SoftPercent, 44.72, 1e-9) {
		t.Error("-u ALL sys+irq+soft differs from -u system")
	}
	if s.Memory == nil || s.Memory.UsedKB != 192224 {
		t.Errorf("Memory = %+v", s.Memory)
	}
	w := Window{From: s.Time, To: s.Time}
	if got, err := rep.MeanCPUBusyPercent(w, "1"); err != nil || got != 100 {
		t.Errorf("cpu 1 busy = %v, %v", got, err)
	}
}

func TestParseSadfTruncatedBinaryFile(t *testing.T) {
	// sadf -j on sar-load.sa with its last 2000 bytes cut off: sadf said
	// "End of system activity file unexpected" on stderr, exited 0 and
	// printed whole JSON over the 5 whole records.
	rep, err := ParseSadf(open(t, "sadf-truncated-sa.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated || len(rep.Samples) != 5 {
		t.Errorf("Truncated = %v, %d samples, want false, 5", rep.Truncated, len(rep.Samples))
	}
}

func TestParseSadfCutJSON(t *testing.T) {
	b := string(fixture(t, "sadf-load.json"))
	i := strings.Index(b, `"time": "07:21:57"`)
	rep, err := ParseSadf(strings.NewReader(b[:i]))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Truncated || len(rep.Samples) != 3 {
		t.Errorf("Truncated = %v, %d samples, want true, 3", rep.Truncated, len(rep.Samples))
	}
}

func TestParseSadfLocalTime(t *testing.T) {
	// sadf -T -j: "utc": 0.
	_, err := ParseSadf(open(t, "sadf-T.json"))
	wantErrContains(t, err, "run sadf without -t or -T")
}

func TestParseSadfMissingField(t *testing.T) {
	b := strings.Replace(string(fixture(t, "sadf-load.json")), `"tcp-tw": 15`, `"tcp-tw-renamed": 15`, 1)
	_, err := ParseSadf(strings.NewReader(b))
	wantErrContains(t, err, `net-sock: missing field "tcp-tw"`)
}
