package hostdata

import (
	"os"
	"path/filepath"
	"testing"
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
