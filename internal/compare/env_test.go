package compare

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"csbench/internal/rundir"
	"csbench/internal/summary"
)

// runDir is a synthetic Phase 1 run directory as a runner leaves it
// (run.env, env/<host>/facts.env, sysctl.txt, tools.txt, qdisc.txt), with
// its summary.json written and read back as csb compare reads it.
type runDir struct {
	cpuModel string
	pin      bool // CPU_PIN: server on CPU 0, client on CPU 1
	noClient bool // the client's capture failed: no env/client/
	handle   string
}

func (rd runDir) make(t *testing.T) (string, *summary.Summary) {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := "schema_version=2\nphase=01-http-baseline\nrun_id=" + filepath.Base(dir) + "\nlab=netns\nstatus=ok\n" +
		"setting.PROFILE=quick\nsetting.LINK_RATE=1gbit\nsetting.SERVER=csb\n" +
		"server.kind=csb\nserver.version=csb-server 892e3ff\nserver.managed=1\nserver.workers=1\nserver.connection_close=0\n" +
		"server.cmdline=" + dir + "/bin/csb-server -port 8080\n"
	if rd.pin {
		env += "clients=1\nserver.cpus=0\nclient.1.cpus=1\n"
	} else {
		env += "server.cpus=\n"
	}
	write("run.env", env)
	for _, h := range []string{"server", "client"} {
		if h == "client" && rd.noClient {
			continue
		}
		nic := map[string]string{"server": "csbs0", "client": "csbc0"}[h]
		write("env/"+h+"/facts.env", "kernel=6.18.44\ncpu_model="+rd.cpuModel+"\ncpus=2\nulimit_n_soft=20000\nulimit_n_hard=20000\n"+
			"nic="+nic+"\nnic_mtu=1500\nnic_speed_mbps=10000\n")
		write("env/"+h+"/sysctl.txt", "net.core.somaxconn = 4096\nnet.ipv4.tcp_congestion_control = bbr\n"+
			"net.core.default_qdisc = unreadable (sysctl: cannot stat /proc/sys/net/core/default_qdisc: No such file or directory)\n"+
			"net.ipv4.tcp_available_congestion_control = reno bbr cubic\n")
		write("env/"+h+"/tools.txt", "wrk: wrk debian/4.1.0-3+b2 [epoll]\niperf3: iperf 3.12\n")
		// The handle and the counters differ from run to run: not a difference.
		write("env/"+h+"/qdisc.txt", "qdisc noqueue 0: dev lo root refcnt 2 \n Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0) \n"+
			"qdisc tbf "+rd.handle+": dev "+nic+" root refcnt 3 rate 1Gbit burst 262125b lat 20ms \n Sent "+rd.handle+" bytes 7 pkt (dropped 0, overlimits 1 requeues 0) \n")
	}
	r, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := summary.New(r, "test")
	s.Cells = []summary.Cell{cell("1k", "", 100)}
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	back, err := summary.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, back
}

func codes(ds []Difference) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.Code)
	}
	return out
}

// The known answer: a Xeon run with both hosts on all CPUs against an EPYC
// run pinned server CPU 0, client CPU 1 differs in exactly cpu_model
// (both hosts, one line) and cpu_pinning, named before the table.
func TestEnvironmentsCPUModelAndPinning(t *testing.T) {
	da, a := runDir{cpuModel: "Intel(R) Xeon(R) Processor", handle: "8085"}.make(t)
	db, b := runDir{cpuModel: "AMD EPYC", pin: true, handle: "8086"}.make(t)
	r, err := Dirs(da, db, a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Difference{
		{Code: "cpu_model", Hosts: []string{"server", "client"}, A: "Intel(R) Xeon(R) Processor", B: "AMD EPYC"},
		{Code: "cpu_pinning", A: "none (server and client on all CPUs)", B: "server CPUs 0, client CPUs 1"},
	}
	if !reflect.DeepEqual(r.Env.Differences, want) {
		t.Fatalf("differences:\n got %+v\nwant %+v", r.Env.Differences, want)
	}
	if !r.Env.MachinesDiffer() {
		t.Error("a CPU model difference is not the server's")
	}
	md := r.Markdown()
	env := strings.Index(md, "**Environments differ** (A → B):\n\n- `cpu_model` (server, client): Intel(R) Xeon(R) Processor → AMD EPYC\n- `cpu_pinning`: none (server and client on all CPUs) → server CPUs 0, client CPUs 1\n\nWhere the environments differ, a change cannot be put down to the server alone.\n")
	table := strings.Index(md, "| cell | metric |")
	if env < 0 || table < 0 || env > table {
		t.Errorf("the environment section is not before the table:\n%s", md)
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Environment   struct {
			Checked     []string `json:"checked"`
			Differences []Difference
		} `json:"environment"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != DocumentVersion || !reflect.DeepEqual(codes(doc.Environment.Differences), []string{"cpu_model", "cpu_pinning"}) {
		t.Errorf("JSON: %s", buf.String())
	}
	for _, c := range []string{"qdisc", "sysctl:net.core.somaxconn", "tool:wrk", "server", "kernel", "lab"} {
		if !contains(doc.Environment.Checked, c) {
			t.Errorf("%s not checked: %v", c, doc.Environment.Checked)
		}
	}
	// Phase 1 does not depend on the list of available algorithms.
	if contains(doc.Environment.Checked, "sysctl:net.ipv4.tcp_available_congestion_control") {
		t.Error("a sysctl Phase 1 does not depend on was compared")
	}
}

func TestEnvironmentsSame(t *testing.T) {
	da, a := runDir{cpuModel: "AMD EPYC", pin: true, handle: "1"}.make(t)
	db, b := runDir{cpuModel: "AMD EPYC", pin: true, handle: "2"}.make(t)
	r, err := Dirs(da, db, a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := codes(r.Env.Differences); len(got) != 0 {
		t.Fatalf("identical environments differ in %v: %+v", got, r.Env.Differences)
	}
	want := "Same environment: lab, profile, clients, cpu_model, cpu_count, cpu_pinning, kernel, link_rate, nic_speed_mbps, nic_mtu, qdisc, ulimit_n, server, server settings (workers, managed, connection_close, scheme), 15 sysctls, 2 tool versions.\n"
	if md := r.Markdown(); !strings.Contains(md, want) || strings.Contains(md, "cannot be put down") {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}
}

// A host whose capture failed: its values are "unreadable", never "" or 0.
func TestEnvironmentsUnreadable(t *testing.T) {
	da, a := runDir{cpuModel: "AMD EPYC", handle: "1"}.make(t)
	db, b := runDir{cpuModel: "AMD EPYC", noClient: true, handle: "1"}.make(t)
	r, err := Dirs(da, db, a, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Env.Differences) == 0 {
		t.Fatal("no difference")
	}
	for _, d := range r.Env.Differences {
		if !reflect.DeepEqual(d.Hosts, []string{"client"}) || d.B != Unreadable || d.A == "" || d.A == Unreadable {
			t.Errorf("difference %+v: want the client's value, unreadable in B", d)
		}
	}
	if got := codes(r.Env.Differences); got[0] != "cpu_model" || !contains(got, "qdisc") || !contains(got, "tool:wrk") {
		t.Errorf("codes %v", got)
	}
}

// Only the server under test differs (csb against nginx): the section says
// so, and does not claim the machines differ.
func TestEnvironmentsServerOnly(t *testing.T) {
	a := &summary.Summary{Phase: "01-http-baseline", Lab: "netns", Server: &summary.Server{Kind: "csb", Version: "csb-server 1"}}
	b := &summary.Summary{Phase: "01-http-baseline", Lab: "netns", Server: &summary.Server{Kind: "nginx", Version: "nginx version: nginx/1.22.1"}}
	e := Environments(a, b, "", "")
	if got := e.Codes(); !reflect.DeepEqual(got, []string{"server"}) || e.MachinesDiffer() {
		t.Fatalf("codes %v", got)
	}
	if md := e.Markdown(); !strings.Contains(md, "**The servers under test differ**") || strings.Contains(md, "qdisc") {
		t.Errorf("markdown:\n%s", md)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Two runs that differ in a runner's setting (an A/B of SLOTS=40 against
// 44) list it as setting:SLOTS; their results roots and names are not
// differences; the section says the settings differ, not the machines.
func TestEnvironmentsSettings(t *testing.T) {
	a := &summary.Summary{Phase: "05-capacity", Lab: "netns", Settings: map[string]string{"SLOTS": "40", "SERVICE_TIME": "10ms", "RESULTS_ROOT": "/r/a", "RUN_NAME": "", "START_RPS": ""}}
	b := &summary.Summary{Phase: "05-capacity", Lab: "netns", Settings: map[string]string{"SLOTS": "44", "SERVICE_TIME": "10ms", "RESULTS_ROOT": "/r/b", "RUN_NAME": "x"}}
	e := Environments(a, b, "", "")
	if got := e.Codes(); len(got) != 2 || got[0] != "setting:SLOTS" || got[1] != "setting:START_RPS" {
		t.Fatalf("codes %v, want setting:SLOTS and setting:START_RPS", got)
	}
	if e.MachinesDiffer() {
		t.Error("a setting was taken for a machine's fact")
	}
	md := e.Markdown()
	for _, want := range []string{"**The runs' settings differ** (A → B):", "- `setting:SLOTS`: 40 → 44", "- `setting:START_RPS`: (empty) → unreadable"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
