package parse

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePidstatTwoPIDs(t *testing.T) {
	// pidstat -H -h -u -r -p SERVER,WRK 1 while wrk loaded the server; wrk
	// exited after 3 s and the last interval lists the server alone.
	rep, err := ParsePidstat(open(t, "pidstat-two-pids.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated || len(rep.Samples) != 7 {
		t.Fatalf("Truncated = %v, %d samples, want 7", rep.Truncated, len(rep.Samples))
	}
	// 1796023324      0      9988   33.00   67.00    0.00   32.00  100.00     1   2068.00      0.00 1709644   13136   0.05  wrksrv
	s := rep.Samples[0]
	if !s.Time.Equal(utc("2026-11-30T07:22:04Z")) || s.UID != 0 || s.PID != 9988 || s.Command != "wrksrv" {
		t.Errorf("first sample = %+v", s)
	}
	if s.UsrPercent != 33 || s.SystemPercent != 67 || s.CPUPercent != 100 || s.CPU != 1 {
		t.Errorf("first sample CPU = %+v", s)
	}
	wantFloat(t, "GuestPercent", s.GuestPercent, 0, 0)
	wantFloat(t, "WaitPercent", s.WaitPercent, 32, 0)
	if s.MinfltPerS != 2068 || s.MajfltPerS != 0 || s.VSZKB != 1709644 || s.RSSKB != 13136 || s.MemPercent != 0.05 {
		t.Errorf("first sample memory = %+v", s)
	}
	// %CPU of a multi-threaded process is a share of one CPU: 101.00.
	if got := rep.Samples[2].CPUPercent; got != 101 {
		t.Errorf("second interval server %%CPU = %v, want 101", got)
	}
	if last := rep.Samples[6]; last.Command != "wrksrv" || !last.Time.Equal(utc("2026-11-30T07:22:07Z")) {
		t.Errorf("last sample = %+v", last)
	}
}

func TestPidstatWindowHelpers(t *testing.T) {
	rep, err := ParsePidstat(open(t, "pidstat-two-pids.txt"))
	if err != nil {
		t.Fatal(err)
	}
	all := Window{From: utc("2026-11-30T07:22:04Z"), To: utc("2026-11-30T07:22:07Z")}
	// Per-interval sums: 100+78, 101+83, 101+80, 11 (wrk gone).
	got, err := rep.MeanCPUPercent(all)
	if err != nil {
		t.Fatal(err)
	}
	if want := (178.0 + 184 + 181 + 11) / 4; !approx(got, want, 1e-9) {
		t.Errorf("MeanCPUPercent = %v, want %v", got, want)
	}
	// RSS sums: 13136+4824, 13132+4824, 13216+4824, 13160.
	maxKB, lastKB, err := rep.RSSKB(all)
	if err != nil {
		t.Fatal(err)
	}
	if maxKB != 13216+4824 || lastKB != 13160 {
		t.Errorf("RSSKB = max %d, last %d", maxKB, lastKB)
	}
	load := Window{From: utc("2026-11-30T07:22:05Z"), To: utc("2026-11-30T07:22:06Z")}
	if got, _ := rep.MeanCPUPercent(load); !approx(got, (184.0+181)/2, 1e-9) {
		t.Errorf("MeanCPUPercent(load) = %v", got)
	}
	none := Window{From: utc("2026-11-30T08:00:00Z"), To: utc("2026-11-30T08:00:10Z")}
	if _, err := rep.MeanCPUPercent(none); !errors.Is(err, ErrNoSamples) {
		t.Errorf("MeanCPUPercent(empty) err = %v", err)
	}
	if _, _, err := rep.RSSKB(none); !errors.Is(err, ErrNoSamples) {
		t.Errorf("RSSKB(empty) err = %v", err)
	}
}

func TestParsePidstatStopped(t *testing.T) {
	// SIGINT (exit 0) and SIGTERM (exit 143) both leave whole lines; with -h
	// pidstat prints no "Average:" lines on SIGINT.
	for _, c := range []struct {
		name string
		n    int
	}{{"pidstat-sigint.txt", 5}, {"pidstat-sigterm.txt", 7}} {
		rep, err := ParsePidstat(open(t, c.name))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rep.Truncated || len(rep.Samples) != c.n {
			t.Errorf("%s: Truncated = %v, %d samples, want %d", c.name, rep.Truncated, len(rep.Samples), c.n)
		}
	}
}

func TestParsePidstatCutMidLine(t *testing.T) {
	b := fixture(t, "pidstat-two-pids.txt")
	i := strings.LastIndex(string(b), "wrksrv\n")
	rep, err := ParsePidstat(strings.NewReader(string(b[:i+3])))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Truncated || len(rep.Samples) != 6 {
		t.Errorf("Truncated = %v, %d samples, want true, 6", rep.Truncated, len(rep.Samples))
	}
}

func TestParsePidstatWrongFlags(t *testing.T) {
	for _, c := range []struct{ name, err string }{
		{"pidstat-no-H.txt", "run pidstat with -H"},
		{"pidstat-no-h.txt", "run pidstat with -h"},
	} {
		_, err := ParsePidstat(open(t, c.name))
		wantErrContains(t, err, c.err)
	}
	// -u without -r: the header has no RSS column.
	in := "# Time        UID       PID    %usr %system  %guest   %wait    %CPU   CPU  Command\n"
	_, err := ParsePidstat(strings.NewReader(in))
	wantErrContains(t, err, "no minflt/s column: run pidstat with -h -r")
}

func TestParsePidstatCommandWithSpaces(t *testing.T) {
	b := strings.Replace(string(fixture(t, "pidstat-two-pids.txt")), "  wrksrv\n", "  Web Content\n", 1)
	rep, err := ParsePidstat(strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Samples[0].Command; got != "Web Content" {
		t.Errorf("Command = %q", got)
	}
}

func TestParsePidstatNoSuchPID(t *testing.T) {
	// pidstat -p 999999: a header, no line, exit 0.
	rep, err := ParsePidstat(open(t, "pidstat-no-such-pid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 0 {
		t.Errorf("%d samples", len(rep.Samples))
	}
	w := Window{From: utc("2026-11-30T00:00:00Z"), To: utc("2026-12-01T00:00:00Z")}
	if _, err := rep.MeanCPUPercent(w); !errors.Is(err, ErrNoSamples) {
		t.Errorf("err = %v, want ErrNoSamples", err)
	}
}

// sysstat prints about 2^64 when a task's CPU time went backwards between
// two readings (recorded in a Phase 4 run): the sample is dropped and
// counted, never summed as 1.8e19 % of a CPU.
func TestParsePidstatWrappedDropped(t *testing.T) {
	rep, err := ParsePidstatCPU(strings.NewReader(string(fixture(t, "pidstat-wrapped.txt"))))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Wrapped != 1 || len(rep.Samples) != 3 {
		t.Fatalf("Wrapped = %d, %d samples; want 1 and 3", rep.Wrapped, len(rep.Samples))
	}
	for _, s := range rep.Samples {
		if s.CPUPercent > 100 || s.Command == "bash" && s.PID == 11826 {
			t.Errorf("a wrapped sample kept: %+v", s)
		}
	}
}
