package parse

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseMpstatStoppedBySIGINT(t *testing.T) {
	// mpstat -P ALL -o JSON 1, stopped by SIGINT while wrk loaded the host.
	rep, err := ParseMpstat(open(t, "mpstat-sigint.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated {
		t.Error("Truncated = true: mpstat closes its JSON on SIGINT")
	}
	if rep.Nodename != "vm" || rep.NumCPUs != 2 {
		t.Errorf("header = %q, %d CPUs", rep.Nodename, rep.NumCPUs)
	}
	if len(rep.Samples) != 5 {
		t.Fatalf("%d samples, want 5", len(rep.Samples))
	}
	first := rep.Samples[0]
	if want := utc("2026-11-30T07:21:54Z"); !first.Time.Equal(want) {
		t.Errorf("first sample at %v, want %v", first.Time, want)
	}
	if got := rep.Samples[4].Time; !got.Equal(utc("2026-11-30T07:21:58Z")) {
		t.Errorf("last sample at %v", got)
	}
	if len(first.CPUs) != 3 || first.CPUs[0].CPU != "all" || first.CPUs[2].CPU != "1" {
		t.Fatalf("CPUs = %+v", first.CPUs)
	}
	// {"cpu": "all", "usr": 54.77, ... "sys": 36.18, ... "soft": 8.54, ... "idle": 0.50}
	all, _ := rep.Samples[1].CPU("all")
	if all.UsrPercent != 54.77 || all.SysPercent != 36.18 || all.SoftPercent != 8.54 || all.IdlePercent != 0.5 {
		t.Errorf("07:21:55 all = %+v", all)
	}
	if !approx(all.BusyPercent(), 99.5, 1e-9) {
		t.Errorf("BusyPercent = %v, want 99.5", all.BusyPercent())
	}
}

func TestMpstatMeanBusyPercent(t *testing.T) {
	rep, err := ParseMpstat(open(t, "mpstat-sigint.json"))
	if err != nil {
		t.Fatal(err)
	}
	// wrk ran from 07:21:54.378 to 07:21:57.391; the samples stamped
	// 07:21:55..57 have idle 0.50, 0.00, 0.00 for "all".
	w := Window{From: utc("2026-11-30T07:21:55Z"), To: utc("2026-11-30T07:21:57Z")}
	got, err := rep.MeanBusyPercent(w, "all")
	if err != nil {
		t.Fatal(err)
	}
	if !approx(got, (99.5+100+100)/3, 1e-9) {
		t.Errorf("mean busy all = %v", got)
	}
	// CPU 0 idle: 1.01, 0.00, 0.00.
	got, err = rep.MeanBusyPercent(w, "0")
	if err != nil {
		t.Fatal(err)
	}
	if !approx(got, (98.99+100+100)/3, 1e-9) {
		t.Errorf("mean busy cpu0 = %v", got)
	}
	per, err := rep.MeanBusyPercentPerCPU(w)
	if err != nil {
		t.Fatal(err)
	}
	if len(per) != 3 || !approx(per["1"], 100, 1e-9) || !approx(per["0"], (98.99+100+100)/3, 1e-9) {
		t.Errorf("per CPU = %v", per)
	}

	empty := Window{From: utc("2026-11-30T08:00:00Z"), To: utc("2026-11-30T09:00:00Z")}
	if _, err := rep.MeanBusyPercent(empty, "all"); !errors.Is(err, ErrNoSamples) {
		t.Errorf("empty window: err = %v, want ErrNoSamples", err)
	}
	if _, err := rep.MeanBusyPercent(w, "7"); !errors.Is(err, ErrNoSamples) {
		t.Errorf("unknown CPU: err = %v, want ErrNoSamples", err)
	}
	if _, err := rep.MeanBusyPercentPerCPU(empty); !errors.Is(err, ErrNoSamples) {
		t.Errorf("per CPU, empty window: err = %v, want ErrNoSamples", err)
	}
}

func TestParseMpstatStoppedBySIGTERM(t *testing.T) {
	// The same run, a second mpstat stopped by SIGTERM: the file ends after
	// the fifth sample's closing brace, with no "]}]}}".
	rep, err := ParseMpstat(open(t, "mpstat-sigterm.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Truncated {
		t.Error("Truncated = false for a file cut by SIGTERM")
	}
	full, err := ParseMpstat(open(t, "mpstat-sigint.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Samples) != 5 {
		t.Fatalf("%d samples, want 5", len(rep.Samples))
	}
	for i := range rep.Samples {
		if !rep.Samples[i].Time.Equal(full.Samples[i].Time) {
			t.Errorf("sample %d at %v, the SIGINT file has %v", i, rep.Samples[i].Time, full.Samples[i].Time)
		}
	}
}

// TestParseMpstatCutAnywhere cuts the real file at every byte: every prefix
// must parse, flagged as truncated, to exactly the samples it holds whole.
func TestParseMpstatCutAnywhere(t *testing.T) {
	b := fixture(t, "mpstat-sigint.json")
	full, err := ParseMpstat(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	// In mpstat's layout a sample ends with "]\n\t\t\t\t}".
	const end = "]\n\t\t\t\t}"
	var ends []int
	for off := 0; ; {
		i := strings.Index(string(b[off:]), end)
		if i < 0 {
			break
		}
		off += i + len(end)
		ends = append(ends, off)
	}
	if len(ends) != len(full.Samples) {
		t.Fatalf("found %d sample ends, want %d", len(ends), len(full.Samples))
	}
	lastBrace := bytes.LastIndexByte(b, '}')
	for n := 1; n < len(b); n++ {
		rep, err := ParseMpstat(bytes.NewReader(b[:n]))
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		whole := 0
		for _, e := range ends {
			if e <= n {
				whole++
			}
		}
		if len(rep.Samples) != whole {
			t.Fatalf("cut at %d: %d samples, want %d", n, len(rep.Samples), whole)
		}
		if rep.Truncated != (n <= lastBrace) {
			t.Fatalf("cut at %d of %d: Truncated = %v", n, len(b), rep.Truncated)
		}
	}
}

func TestParseMpstatShortRun(t *testing.T) {
	// mpstat -P ALL -o JSON 1 2 on an idle host, ended on its own.
	rep, err := ParseMpstat(open(t, "mpstat-complete.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Truncated || len(rep.Samples) != 2 {
		t.Fatalf("Truncated = %v, %d samples", rep.Truncated, len(rep.Samples))
	}
	w := Window{From: rep.Samples[0].Time, To: rep.Samples[1].Time}
	if got, err := rep.MeanBusyPercent(w, "all"); err != nil || got != 0 {
		t.Errorf("idle host: busy = %v, %v", got, err)
	}
}

func TestParseMpstatNotISO(t *testing.T) {
	// The real output without S_TIME_FORMAT=ISO: "date": "11/30/26".
	_, err := ParseMpstat(open(t, "mpstat-not-iso.json"))
	wantErrContains(t, err, "S_TIME_FORMAT=ISO")
}

func TestParseMpstatBadInput(t *testing.T) {
	for _, c := range []struct{ name, in, err string }{
		{"empty", "", "empty input"},
		{"text", "Linux 6.18.44 (vm) 11/30/26 _x86_64_ (2 CPU)\n", "invalid character"},
		{"no hosts", `{"sysstat": {}}`, "no \"sysstat\".\"hosts\""},
		{"missing idle", `{"sysstat": {"hosts": [{"date": "2026-11-30", "statistics": [
			{"timestamp": "07:00:00", "cpu-load": [{"cpu": "all", "usr": 1, "nice": 0, "sys": 0,
			"iowait": 0, "irq": 0, "soft": 0, "steal": 0, "guest": 0, "gnice": 0}]}]}]}}`, `missing field "idle"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMpstat(strings.NewReader(c.in))
			wantErrContains(t, err, c.err)
		})
	}
}

func TestParseMpstatAcrossMidnight(t *testing.T) {
	// Times of day run 23:59:59 -> 00:00:00: the second sample is on the
	// next day. (Layout of mpstat-complete.json, times edited.)
	in := strings.ReplaceAll(string(fixture(t, "mpstat-complete.json")), `"07:22:00"`, `"23:59:59"`)
	in = strings.ReplaceAll(in, `"07:22:01"`, `"00:00:00"`)
	rep, err := ParseMpstat(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Samples[1].Time; !got.Equal(utc("2026-12-01T00:00:00Z")) {
		t.Errorf("second sample at %v, want 2026-12-01T00:00:00Z", got)
	}
}
