package summary

import "testing"

// nginx's tcp_nopush as run.env records it; on for a run recorded before
// the setting existed; none for another server.
func TestTCPNopush(t *testing.T) {
	for _, c := range []struct{ kind, nginx, want string }{
		{"nginx", "worker_processes=auto keepalive_timeout=75s tcp_nopush=off access_log=off", "off"},
		{"nginx", "worker_processes=auto tcp_nopush=on access_log=off", "on"},
		{"nginx", "worker_processes=auto worker_connections=4096 access_log=off", "on"},
		{"csb", "", ""},
	} {
		if got := (Server{Kind: c.kind, Nginx: c.nginx}).TCPNopush(); got != c.want {
			t.Errorf("%s %q: %q, want %q", c.kind, c.nginx, got, c.want)
		}
	}
}
