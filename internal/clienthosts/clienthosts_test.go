package clienthosts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/rundir"
)

func run(env map[string]string) *rundir.Run { return &rundir.Run{Env: env, Schema: 1} }

func TestFromRunOneClientIsASetOfOne(t *testing.T) {
	for _, env := range []map[string]string{{}, {"clients": "1"}} {
		s, err := FromRun(run(env))
		if err != nil || s.N() != 1 || s.Clients[0].Label != OneLabel || s.OwnDirs {
			t.Errorf("%v: %+v, %v; want one client %q, its raw files in raw/", env, s, err, OneLabel)
		}
		if got := s.RawPath("/r", "", OneLabel, "1k.txt"); got != "/r/raw/1k.txt" {
			t.Errorf("schema 1, one client: %s", got)
		}
	}
	r := &rundir.Run{Env: map[string]string{"clients": "1", "client.1.label": "client"}, Schema: 2}
	s, err := FromRun(r)
	if err != nil || !s.OwnDirs || s.RawPath("/r", "warmup/", OneLabel, "1k.txt") != "/r/raw/warmup/client/1k.txt" {
		t.Errorf("schema 2: %+v, %v", s, err)
	}
}

func TestFromRun(t *testing.T) {
	env := map[string]string{"clients": "2", "server.cpus": "0", "clock_bound_ms": "50",
		"client.1.label": "client1", "client.1.ssh": "local", "client.1.addrs": "198.18.0.2", "client.1.nic": "c0", "client.1.cpus": "1", "client.1.clock_offset_ms": "0",
		"client.2.label": "client2", "client.2.ssh": "root@198.18.0.3", "client.2.addrs": "198.18.0.3,198.18.0.4", "client.2.nic": "c1", "client.2.cpus": "", "client.2.clock_offset_ms": "-1.5"}
	s, err := FromRun(run(env))
	if err != nil || s.N() != 2 || s.ServerCPUs != "0" || *s.ClockBoundMs != 50 {
		t.Fatalf("%+v, %v", s, err)
	}
	c := s.Clients[1]
	if c.Label != "client2" || c.SSH != "root@198.18.0.3" || len(c.Addrs) != 2 || *c.ClockOffsetMs != -1.5 || c.CPUs != "" {
		t.Errorf("client2: %+v", c)
	}
	for key, bad := range map[string]string{"clients": "two", "client.2.label": "client3", "client.1.clock_offset_ms": "soon", "clock_bound_ms": "x"} {
		e := map[string]string{}
		for k, v := range env {
			e[k] = v
		}
		e[key] = bad
		if _, err := FromRun(run(e)); err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: %v", key, bad, err)
		}
	}
}

func TestReadTiming(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, "t.json")
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	tm, err := ReadTiming(write(`{"schema":"csb.timing/v1","due_ms":100,"start_ms":101,"end_ms":2101,"exit":0}`))
	if err != nil || *tm.StartMs != 101 || *tm.EndMs != 2101 || *tm.Exit != 0 {
		t.Fatalf("%+v, %v", tm, err)
	}
	for _, bad := range []string{
		`{"schema":"csb.timing/v2","due_ms":1,"start_ms":1,"end_ms":2,"exit":0}`,
		`{"schema":"csb.timing/v1","due_ms":1,"start_ms":1,"exit":0}`,
		`{"schema":"csb.timing/v1","due_ms":1,"start_ms":3,"end_ms":2,"exit":0}`,
		`{"schema":"csb.timing/v1","due_ms":1,"start_ms":1,"end_ms":2,"exit":0,"x":1}`,
		`{"schema":"csb.timing/v1","due_ms":1,`,
	} {
		if _, err := ReadTiming(write(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }

func TestOverlap(t *testing.T) {
	cs := []Client{{Label: "client1", ClockOffsetMs: f64(0)}, {Label: "client2", ClockOffsetMs: f64(250)}, {Label: "client3"}}
	ts := []Timing{
		{StartMs: i64(1000), EndMs: i64(3000)},
		{StartMs: i64(1290), EndMs: i64(3300)}, // 1040..3050 on the controller's clock
		{StartMs: i64(1010), EndMs: i64(2990)},
	}
	w, err := Overlap(cs, ts, 500)
	if err != nil {
		t.Fatal(err)
	}
	if w.FromMs != 1540 || w.ToMs != 2990 || w.StartSpreadMs != 40 || w.EndSpreadMs != 60 || w.S() != 1.45 {
		t.Errorf("%+v", w)
	}
	if _, err := Overlap(cs, ts, 2000); err == nil || !strings.Contains(err.Error(), "do not overlap") {
		t.Errorf("warm-up past the end: %v", err)
	}
}

func TestCPUCount(t *testing.T) {
	for in, want := range map[string]int{"": 0, "1": 1, "0-3": 4, "1,3-5": 4, "3-1": 0, "x": 0} {
		if got := CPUCount(in); got != want {
			t.Errorf("CPUCount(%q) = %d, want %d", in, got, want)
		}
	}
}
