package summary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/rundir"
)

func TestTLSFor(t *testing.T) {
	if got := TLSFor(&rundir.Run{Env: map[string]string{}}); got != nil {
		t.Errorf("a run from before SCHEME: %+v, want nil", got)
	}
	if got := TLSFor(&rundir.Run{Env: map[string]string{"tls.scheme": "http"}}); got == nil || got.Scheme != "http" || got.Version != "" {
		t.Errorf("http: %+v", got)
	}
	dir := t.TempDir()
	for _, d := range []string{"raw", "server"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	env := map[string]string{"tls.scheme": "https", "tls.source": "lab", "tls.key_type": "rsa-2048", "tls.tickets": "0"}
	// No probe: said so, never guessed.
	got := TLSFor(&rundir.Run{Dir: dir, Env: env})
	if got.ProbeError == "" || got.Version != "" || got.KeyType != "rsa-2048" || got.Tickets == nil || *got.Tickets {
		t.Errorf("without a probe: %+v", got)
	}
	// The probe's first connection and the server's listening line.
	probe := `{"schema_version":1,"document":"tls-probe","tool":"t","target":"198.18.0.1:8080",
 "first":{"version":"TLS 1.3","cipher_suite":"TLS_AES_128_GCM_SHA256","alpn":"http/1.1","key_type":"rsa-2048","resumed":false},
 "second":{"version":"TLS 1.3","cipher_suite":"TLS_AES_128_GCM_SHA256","alpn":"http/1.1","key_type":"rsa-2048","resumed":false},
 "connect_ms":0.2,"handshake_ms":3.5,"resumed_handshake_ms":null}`
	os.WriteFile(filepath.Join(dir, "raw", "tls-probe.json"), []byte(probe), 0o644)
	os.WriteFile(filepath.Join(dir, "server", "csb-server-1.log"), []byte(`{"event":"listening","addr":"x","tls":{"key_type":"rsa-2048","session_tickets":false}}`+"\n"), 0o644)
	got = TLSFor(&rundir.Run{Dir: dir, Env: env})
	if got.Version != "TLS 1.3" || got.CipherSuite != "TLS_AES_128_GCM_SHA256" || got.Resumed == nil || *got.Resumed ||
		got.ServerKey != "rsa-2048" || got.ServerTicket == nil || *got.ServerTicket {
		t.Errorf("with the probe: %+v", got)
	}
	// Another version of the probe document is refused, by name.
	os.WriteFile(filepath.Join(dir, "raw", "tls-probe.json"), []byte(strings.Replace(probe, `"schema_version":1`, `"schema_version":2`, 1)), 0o644)
	if got = TLSFor(&rundir.Run{Dir: dir, Env: env}); !strings.Contains(got.ProbeError, "schema_version 2") {
		t.Errorf("version 2: %+v", got)
	}
}
