package hostdata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/golden"
)

// /proc/net/sockstat as this kernel prints it.
const sockstat = `sockets: used 183
TCP: inuse 5 orphan 0 tw 10021 alloc 9 mem 2
UDP: inuse 0 mem 0
UDPLITE: inuse 0
RAW: inuse 0
FRAG: inuse 0 memory 0
`

func TestReadSockstat(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.sockstat")
	if err := os.WriteFile(p, []byte(sockstat), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadSockstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if m["TCP.tw"] != 10021 || m["TCP.inuse"] != 5 || m["sockets.used"] != 183 || m["FRAG.memory"] != 0 {
		t.Fatalf("%v", m)
	}
	if err := os.WriteFile(p, []byte("TCP: inuse five\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSockstat(p); err == nil {
		t.Fatal("a word where a number belongs must be an error")
	}
}

func TestLoadMissingMonitorsIsNotFatal(t *testing.T) {
	h := Load(t.TempDir())
	if len(h.Problems) != 2 || h.Mpstat["server"] != nil {
		t.Fatalf("%+v", h)
	}
}

// A broken monitor file is named, on one line without its raw bytes, with
// every metric it leaves null.
func TestBrokenMonitorNamedWithItsNulls(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "monitors", "server"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "monitors", "server", "mpstat.json"), []byte("{\"sysstat\": {\x1b\n\xff"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := Load(dir)
	want := map[string]bool{
		"monitors/client/mpstat.json: missing; null because of it: client_cpu_pct, client_cpu_max_core_pct": true,
	}
	var broken string
	for _, p := range h.Problems {
		if want[p] {
			delete(want, p)
		} else {
			broken = p
		}
	}
	if len(want) != 0 || !strings.HasPrefix(broken, "monitors/server/mpstat.json: ") ||
		!strings.HasSuffix(broken, "; null because of it: server_cpu_pct, server_cpu_max_core_pct") ||
		strings.ContainsAny(broken, "\x1b\n\xff") {
		t.Fatalf("problems %q", h.Problems)
	}
}

// A run directory whose path looks like a glob pattern: the server's
// pidstat file (the run's own processes) is read, not missed (which would
// leave its CPU and RSS null and count the run's server as other load).
func TestRunDirThatLooksLikeAPattern(t *testing.T) {
	dir := golden.CopyTree(t, "../phase0/testdata/run", "My Runs [x]* ?")
	h := Load(dir)
	if h.Pidstat["server/iperf3"] == nil {
		t.Fatalf("server/iperf3 pidstat not read; problems %q", h.Problems)
	}
}
