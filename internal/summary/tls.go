package summary

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"strings"

	"csbench/internal/rundir"
	"csbench/internal/tlscert"
)

// TLS is the scheme of an HTTP run and, with https, what was negotiated:
// the version, cipher suite and key type from the client's first connection
// (csb tls-probe, raw/tls-probe.json), the server's own account of its key
// type and tickets (its listening line), and the run's settings.
type TLS struct {
	Scheme       string   `json:"scheme"` // http or https
	Version      string   `json:"version,omitempty"`
	CipherSuite  string   `json:"cipher_suite,omitempty"`
	KeyType      string   `json:"key_type,omitempty"`
	ALPN         string   `json:"alpn,omitempty"`
	Source       string   `json:"source,omitempty"` // lab (made for the run) or user (TLS_CERT)
	Tickets      *bool    `json:"session_tickets,omitempty"`
	Resumed      *bool    `json:"second_connection_resumed,omitempty"` // null: no probe
	HandshakeMs  *float64 `json:"probe_handshake_ms,omitempty"`
	ServerKey    string   `json:"server_key_type,omitempty"` // from the server's log ("" when it does not say)
	ServerTicket *bool    `json:"server_session_tickets,omitempty"`
	ProbeError   string   `json:"probe_error,omitempty"`
}

// TLSFor reads a run's scheme (run.env tls.*) and its probe; nil for a run
// from before SCHEME existed.
func TLSFor(r *rundir.Run) *TLS {
	scheme := r.Get("tls.scheme")
	if scheme == "" {
		return nil
	}
	t := &TLS{Scheme: scheme}
	if scheme != "https" {
		return t
	}
	t.Source = r.Get("tls.source")
	t.KeyType = r.Get("tls.key_type")
	if v := r.Get("tls.tickets"); v != "" {
		b := v == "1"
		t.Tickets = &b
	}
	if p, err := tlscert.ReadProbe(filepath.Join(r.Dir, "raw", "tls-probe.json")); err == nil {
		t.Version, t.CipherSuite, t.ALPN = p.First.Version, p.First.CipherSuite, p.First.ALPN
		t.KeyType = p.First.KeyType
		res := p.Second.Resumed
		t.Resumed = &res
		hs := p.HandshakeMs
		t.HandshakeMs = &hs
	} else {
		t.ProbeError = err.Error()
	}
	t.ServerKey, t.ServerTicket = serverTLSLine(r.Dir)
	return t
}

// serverTLSLine: the reference server's listening line's tls object (its
// first log), if any.
func serverTLSLine(dir string) (string, *bool) {
	logs, _ := rundir.Files(filepath.Join(dir, "server"), "", "-1.log")
	for _, l := range logs {
		f, err := rundir.Open(l)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if !strings.HasPrefix(sc.Text(), `{"event":"listening"`) {
				continue
			}
			var ev struct {
				TLS *struct {
					KeyType string `json:"key_type"`
					Tickets bool   `json:"session_tickets"`
				} `json:"tls"`
			}
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.TLS != nil {
				f.Close()
				return ev.TLS.KeyType, &ev.TLS.Tickets
			}
		}
		f.Close()
	}
	return "", nil
}
