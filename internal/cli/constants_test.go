package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/c10kplan"
	"csbench/internal/kv"
	"csbench/internal/parse"
)

// lib/constants.sh is what `csb constants -sh` prints today, so bash reads
// the Go values.
func TestConstantsFileIsCurrent(t *testing.T) {
	path := filepath.Join("..", "..", "lib", "constants.sh")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := ConstantsShell(); string(got) != want {
		t.Fatalf("%s is stale: regenerate it with `bin/csb constants -sh > lib/constants.sh`\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func TestConstantsCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := Main([]string{"constants"}, &out, &errb); rc != 0 {
		t.Fatalf("exit %d: %s", rc, errb.String())
	}
	m := kv.ParseString(out.String(), "=")
	for k, want := range map[string]string{
		"C10K_FD_MARGIN": "64", "C10K_PORT_MARGIN": "256", "C10K_REUSEPORT_SLACK_PCT": "90",
		"CSB_SIZE_K": "1024", "C10K_KB_PER_CONN_SERVER_CSB": "24",
	} {
		if m[k] != want {
			t.Errorf("%s=%q, want %q", k, m[k], want)
		}
	}
	// The prefix keeps its trailing space on the line.
	if !strings.Contains(out.String(), "\nCSB_WRK_JSON_PREFIX="+parse.WrkJSONPrefix+"\n") {
		t.Errorf("no CSB_WRK_JSON_PREFIX line with %q", parse.WrkJSONPrefix)
	}
	if m["C10K_FD_MARGIN"] != "64" || c10kplan.FDMargin != 64 {
		t.Errorf("fd margin")
	}
	if rc := Main([]string{"constants", "-x"}, &out, &errb); rc != 2 {
		t.Errorf("bad flag: exit %d, want 2", rc)
	}
}
