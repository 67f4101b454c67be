package phase3

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"csbench/internal/c10kplan"
	"csbench/internal/kv"
	"csbench/internal/summary"
)

// An old plan.env converted into the plan document loses nothing its
// view shows: the view summary.json keeps of it is the file's lines.
func TestPlanFromEnvKeepsTheView(t *testing.T) {
	files, err := filepath.Glob("testdata/run/raw/*.plan.env")
	if err != nil || len(files) == 0 {
		t.Fatalf("no plan.env in the fixture: %v", err)
	}
	for _, f := range files {
		m, err := kv.Read(f, "=")
		if err != nil {
			t.Fatal(err)
		}
		cell := strings.TrimSuffix(filepath.Base(f), ".plan.env")
		p, view, name, err := readPlan("testdata/run", cell)
		if err != nil || p == nil || name != "raw/"+cell+".plan.env" {
			t.Fatalf("%s: %v %v %s", f, p, err, name)
		}
		if !equalMaps(view, m) {
			t.Errorf("%s: view differs from the file:\n%s", f, mapDiff(m, view))
		}
		if p.Scenario.Kind != m["scenario"] || p.ServerFDHard.V != 700 || len(p.Sources) != 1 || p.Sources[0].Connections != 800 {
			t.Errorf("%s: plan %+v", f, p)
		}
	}
}

// The same plan, once a plan.json and once a plan.env (the keys the old
// runner wrote), gives the same view and the same sentences: decisions
// and reports read the document, whichever file it came from.
func TestPlanEnvAndJSONAgree(t *testing.T) {
	srv, err := c10kplan.ReadFacts("testdata/run/raw/limits.server.env")
	if err != nil {
		t.Fatal(err)
	}
	cli, err := c10kplan.ReadFacts("testdata/run/raw/limits.client.env")
	if err != nil {
		t.Fatal(err)
	}
	var ss strings.Builder
	for i := 0; i < 600; i++ {
		fmt.Fprintf(&ss, "TIME-WAIT 0 0 198.18.0.2:%d 198.18.0.1:8080\n", 30000+i)
	}
	socks, err := c10kplan.ReadSockets(strings.NewReader(ss.String()), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []c10kplan.Input{
		// 1200 connections: three server processes (fd 700), two client
		// processes (fd 1000), on fresh addresses (198.18.0.2 is busy).
		{Kind: "idle", Conns: 1200, ConnectRate: 1000, Lab: "netns", TWThreshold: 500},
		// Refused: wrk opens all 5000 connections from one process, over
		// the client's hard fd limit of 1000.
		{Kind: "active", Conns: 5000, ConnectRate: 1000, Lab: "netns", TWThreshold: 500},
	} {
		in.ServerIP, in.ServerPort, in.ClientIP, in.ClientNIC = "198.18.0.1", 8080, "198.18.0.2", "csbc0"
		in.Server, in.Client, in.Sockets, in.Present = srv, cli, socks, map[string]bool{"198.18.0.2": true}
		want := c10kplan.Compute(in)
		if in.Kind == "idle" && (want.ServerProcs != 3 || len(want.Sources) != 2 || len(want.Candidates) == 0) ||
			in.Kind == "active" && (want.OK || want.Refusal() == "") {
			t.Fatalf("%s: not the plan this test is about: %+v", in.Kind, want)
		}
		dir := t.TempDir()
		raw := filepath.Join(dir, "raw")
		if err := os.MkdirAll(raw, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := c10kplan.Write(filepath.Join(raw, "a.plan.json"), want); err != nil {
			t.Fatal(err)
		}
		// plan.env had neither codes nor hosts nor client_procs_by_fd.
		var env strings.Builder
		view := planView(want)
		for _, k := range kv.SortedKeys(view) {
			switch k {
			case RefusalCode, "client_procs_by_fd", "client_source_hosts", "client_hosts":
				continue
			}
			fmt.Fprintf(&env, "%s=%s\n", k, view[k])
		}
		if err := os.WriteFile(filepath.Join(raw, "b.plan.env"), []byte("# Written by lib/c10k.sh\n"+env.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		pj, vj, _, err := readPlan(dir, "a")
		if err != nil {
			t.Fatal(err)
		}
		pe, ve, _, err := readPlan(dir, "b")
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range ve {
			if vj[k] != v {
				t.Errorf("%s: %s = %q from plan.env, %q from plan.json", in.Kind, k, v, vj[k])
			}
		}
		if pe.ClientProcsByFD != pj.ClientProcsByFD {
			t.Errorf("%s: client_procs_by_fd %d from plan.env, %d from plan.json", in.Kind, pe.ClientProcsByFD, pj.ClientProcsByFD)
		}
		fig := &Figures{ConnectFigures: ConnectFigures{ConnectionsTarget: summary.F(float64(in.Conns)), ServerProcs: summary.F(float64(want.ServerProcs)),
			ClientProcs: summary.F(float64(max(len(want.Sources), 1)))}}
		for name, f := range map[string]func(*c10kplan.Plan) string{
			"splitOf":  func(p *c10kplan.Plan) string { return splitOf(p, fig).text },
			"headroom": func(p *c10kplan.Plan) string { return headroom(p, fig) },
			"ports":    portsEvidence, "fd": fdLimits, "tw": twAtStart, "note": planNote, "range": portRange,
			"fdEvidence": func(p *c10kplan.Plan) string { return fdEvidence(p, fig) },
		} {
			if a, b := f(pj), f(pe); a != b {
				t.Errorf("%s: %s %q from plan.json, %q from plan.env", in.Kind, name, a, b)
			}
		}
	}
	// Without a plan the sentences say so, as they always did.
	if twAtStart(nil) != "—" || planNote(nil) != "—" || headroom(nil, &Figures{}) != "no plan recorded" || fdLimits(nil) != "" {
		t.Error("the sentences of a cell without a plan changed")
	}
}

// A refused plan keeps its code in the view, its sentence in the
// verdict's evidence; the wall comes from the code.
func TestRefusalFromCode(t *testing.T) {
	p := &c10kplan.Plan{Refusals: []c10kplan.Refusal{{Code: c10kplan.CodeListenBacklog, Message: "somaxconn too small"}}}
	c := &summary.Cell{Name: "x", Status: "refused", Params: map[string]string{"scenario": "idle"}, Metrics: map[string]*float64{}, Details: map[string]any{}}
	msg := "reworded"
	c.Error = &msg
	v := verdict(&summary.Summary{}, c, p)
	if v.Bound != WallBacklog+" (refused before it started)" || v.Evidence != msg {
		t.Errorf("verdict %+v", v)
	}
	if v := verdict(&summary.Summary{}, c, nil); v.Bound != "refused (refused before it started)" {
		t.Errorf("without a plan: %+v", v)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func mapDiff(want, got map[string]string) string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, fmt.Sprintf("%s: want %q, got %q", k, v, got[k]))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: not in the file, got %q", k, v))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
