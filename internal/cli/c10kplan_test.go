package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// csb c10k-plan over two client hosts (-client-host, each with its facts):
// every source names its host, the runner's lines list them, and a bad
// host spec is bad usage naming what is missing.
func TestC10kPlanClientHosts(t *testing.T) {
	d := filepath.Join("..", "c10kplan", "testdata")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "p.json")
	facts := filepath.Join(d, "limits-c100k.client.env")
	// Fresh hosts: no socket toward the server; their addresses present.
	empty, addrs := filepath.Join(tmp, "ports.txt"), filepath.Join(tmp, "addrs-%d.json")
	os.WriteFile(empty, nil, 0o644)
	for i, ips := range [][]string{{"198.18.0.2", "198.18.0.12", "198.18.0.13"}, {"198.18.0.3", "198.18.0.22", "198.18.0.23"}} {
		j := `[{"ifname":"eth1","addr_info":[`
		for k, ip := range ips {
			if k > 0 {
				j += ","
			}
			j += `{"family":"inet","local":"` + ip + `"}`
		}
		os.WriteFile(strings.Replace(addrs, "%d", string(rune('1'+i)), 1), []byte(j+"]}]"), 0o644)
	}
	state := func(i int) string {
		return ",sockets=" + empty + ",addrs=" + strings.Replace(addrs, "%d", string(rune('0'+i)), 1)
	}
	args := []string{"c10k-plan", "-lab", "ssh", "-server-ip", "198.18.0.1", "-server-port", "8080",
		"-server-facts", filepath.Join(d, "limits-c100k.server.env"), "-kind", "idle", "-conns", "100000",
		"-connect-rate", "2000", "-tw-threshold", "500", "-out", out,
		"-client-host", "name=root@cli1,ip=198.18.0.2,extra=198.18.0.12+198.18.0.13,facts=" + facts + state(1),
		"-client-host", "name=root@cli2,ip=198.18.0.3,extra=198.18.0.22+198.18.0.23,facts=" + facts + state(2)}
	var stdout, stderr bytes.Buffer
	if got := Main(args, &stdout, &stderr); got != 0 {
		t.Fatalf("status %d: %s", got, stderr.String())
	}
	if !strings.Contains(stdout.String(), "ok=1\n") || !strings.Contains(stdout.String(), "source_hosts=root@cli1,root@cli1,root@cli1,root@cli2,root@cli2,root@cli2\n") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ServerProcs int `json:"server_procs"`
		Hosts       []struct {
			Name        string `json:"name"`
			Connections int    `json:"connections"`
		} `json:"client_hosts"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	if p.ServerProcs != 6 || len(p.Hosts) != 2 || p.Hosts[1].Name != "root@cli2" || p.Hosts[1].Connections != 50000 {
		t.Errorf("plan %+v", p)
	}
	stdout.Reset()
	stderr.Reset()
	bad := append(args[:len(args)-2:len(args)-2], "-client-host", "name=x,facts="+facts)
	if got := Main(bad, &stdout, &stderr); got != 2 || !strings.Contains(stderr.String(), "needs name=, ip= and facts=") {
		t.Errorf("bad spec: status %d, stderr %q", got, stderr.String())
	}
}
