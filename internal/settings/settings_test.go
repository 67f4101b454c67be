package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKinds(t *testing.T) {
	for _, c := range []struct {
		kind      string
		good, bad []string
	}{
		{"ip", []string{"198.18.0.1", "::1", "fd00::1"}, []string{"", "256.0.0.1", "host", "1.2.3", "1:2"}},
		{"ip_or_empty", []string{"", "10.0.0.1"}, []string{"x"}},
		{"ips_or_empty", []string{"", "10.0.0.1,10.0.0.2"}, []string{"10.0.0.1,", "10.0.0.1,,10.0.0.2"}},
		{"ssh_dest", []string{"root@gtinfra02", "h.example", "me@fd00::1"}, []string{"", "Root@h", "-oProxyCommand=x", "a b"}},
		{"nic", []string{"enp1s0", "csbc0"}, []string{"", "a-very-long-interface", "eth0;"}},
		{"uint", []string{"0", "60"}, []string{"", "-1", "1.5", "1234567890"}},
		{"posint", []string{"1", "010"}, []string{"0", "00", "", "x"}},
		{"posints", []string{"16,64,128"}, []string{"16,", ",16", "16,,64", "16,0", ""}},
		{"port", []string{"1", "65535"}, []string{"0", "65536"}},
		{"bool", []string{"0", "1"}, []string{"", "yes", "2"}},
		{"fraction", []string{"0", "0.001", "1", "1.0"}, []string{"", "-0.1", "1.5", "1e-3", ".5", "x"}},
		{"name", []string{"smoke-1", "a.b_c"}, []string{"", ".x", "a/b", strings.Repeat("a", 65)}},
		{"rate", []string{"1gbit", "100mbit", "none", "999999kbit"}, []string{"1Gbit", "0bit", "1gbps", ""}},
		{"path", []string{"/home/me/My Runs", "rel/*[x]"}, []string{"", "/a\nb"}},
		{"sizes", []string{"1k,10k,100k", "512", "1m"}, []string{"1K", "0", "1k,", "1g"}},
		{"conncounts", []string{"20000,50000", "20k,1m", "10m"}, []string{"11m", "0", "1k,", "10001k"}},
		{"conncounts_or_empty", []string{""}, []string{"x"}},
		{"scenarios", []string{"idle", "idle,lowrate"}, []string{"", "Idle", "idle,", "a b"}},
		{"clients", []string{"1", "8"}, []string{"0", "9", "10", "01", ""}},
		{"client_hosts", []string{"", "local/192.0.2.11/enp1s0 me@c2/192.0.2.12+192.0.2.13/enp1s0"}, []string{"local/x/enp1s0", "local/192.0.2.11", "me@c2/192.0.2.12/eth0;"}},
		{"workers_or_empty", []string{"", "auto", "4"}, []string{"0", "all"}},
		{"on_off", []string{"on", "off"}, []string{"", "1", "On"}},
		{"cmdline_or_empty", []string{"", "/usr/sbin/myserver -listen {ip}:{port} -bin={bin}"}, []string{"a;b", "$(x)", "a 'b'", "a\nb|c", "{host}"}},
		{"cpulist_or_empty", []string{"", "1", "0-1", "0,2-3"}, []string{"one", "1,", "-1"}},
		{"url_path", []string{"/healthz", "/a/b.c"}, []string{"healthz", "/a b", "/a?b"}},
		{"payload_paths_or_empty", []string{"", "1k=/static/1k.bin,10k=/s"}, []string{"1k", "1k=static", "1k=/a,", "x=/a"}},
		{"closes", []string{"linger0,server,client", "client"}, []string{"never", "client,"}},
		{"portrange_or_empty", []string{"", "40000-40999", "1024-65535"}, []string{"40999-40000", "1023-2000", "40000-70000", "40000"}},
		{"handshakes", []string{"full", "full,resumed"}, []string{"half", "full,resumed,full"}},
		{"enum:a|bb", []string{"a", "bb"}, []string{"", "b", "a|bb"}},
	} {
		for _, v := range c.good {
			if e := checkValue(Setting{"K", c.kind, "flag", v}); e != "" {
				t.Errorf("%s %q refused: %s", c.kind, v, e)
			}
		}
		for _, v := range c.bad {
			if e := checkValue(Setting{"K", c.kind, "flag", v}); e == "" {
				t.Errorf("%s %q accepted", c.kind, v)
			}
		}
	}
}

func TestMessages(t *testing.T) {
	for _, c := range []struct {
		s    Setting
		want string
	}{
		{Setting{"SERVER_PORT", "port", "lab.env:3", "80 80"}, `SERVER_PORT=80\ 80 is not valid (from lab.env:3): expected a port number 1-65535`},
		{Setting{"RESULTS_ROOT", "path_or_empty", "flag", "/tmp/a\nb"}, `RESULTS_ROOT=$'/tmp/a\nb' is not valid (from flag): expected a path on one line (any byte but a newline)`},
		{Setting{"TLS_KEY_TYPE", "enum:ecdsa-p256|rsa-2048", "flag", "dsa"}, "TLS_KEY_TYPE=dsa is not valid (from flag): expected one of: ecdsa-p256 rsa-2048"},
		{Setting{"RUN_NAME", "name_or_empty", "flag", strings.Repeat("x", 300)}, "RUN_NAME is 300 bytes long (from flag): the limit is 256 bytes for a setting"},
		{Setting{"SSH_KEY", "path_or_empty", "environment", strings.Repeat("x", 4200)}, "SSH_KEY is 4200 bytes long (from environment): the limit is 4096 bytes for a path"},
		{Setting{"CLIENTS", "clients", "flag", "9"}, "CLIENTS=9 is not valid (from flag): expected a number of client hosts from 1 to 8"},
	} {
		if got := checkValue(c.s); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.s, got, c.want)
		}
	}
}

// TestShellQuote: the quoting of bash 5.2's printf %q, for the values a
// message may show.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":          "''",
		"a,b":       `a\,b`,
		"a b":       `a\ b`,
		"x=y":       "x=y",
		"~a":        `\~a`,
		"a~":        "a~",
		"a=~b":      `a=\~b`,
		"a:b@c%d+e": "a:b@c%d+e",
		"it's":      `it\'s`,
		"$(x)":      `\$\(x\)`,
		"a\nb":      `$'a\nb'`,
		"a\tb":      `$'a\tb'`,
		"x\x01":     `$'x\001'`,
		"a'b\n":     `$'a\'b\n'`,
		"é":         "é",
		"a*b":       `a\*b`,
		"{ip}":      `\{ip\}`,
		"#a":        `\#a`,
		"a#":        "a#",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func check(t *testing.T, kv ...string) string {
	t.Helper()
	var set []Setting
	for i := 0; i < len(kv); i += 2 {
		set = append(set, Setting{kv[i], "path_or_empty", "flag", kv[i+1]})
	}
	errs, err := Check(set)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(errs, "\n")
}

func TestRules(t *testing.T) {
	dir := t.TempDir()
	pem := filepath.Join(dir, "a.pem")
	if err := os.WriteFile(pem, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kv   []string
		want string
	}{
		{[]string{"SERVER", "csb", "SERVER_CMD", "", "SERVER_BIN", ""}, ""},
		{[]string{"SERVER", "cmd", "SERVER_CMD", ""}, "SERVER=cmd needs SERVER_CMD"},
		{[]string{"SERVER", "cmd", "SERVER_CMD", "{bin} -p {port}", "SERVER_BIN", ""}, "SERVER_CMD uses {bin} but SERVER_BIN is empty"},
		{[]string{"SERVER", "cmd", "SERVER_CMD", "{bin}", "SERVER_BIN", dir}, "SERVER_BIN=" + dir + " is not a file on this host"},
		{[]string{"SERVER", "nginx", "SERVER_CMD", "x", "SERVER_BIN", "y"}, "SERVER_BIN is set but SERVER=nginx"},
		{[]string{"SERVER", "url", "SERVER_CPUS", "1"}, "SERVER_CPUS is set but SERVER=url"},
		{[]string{"SERVER", "csb", "SERVER_PID", "1"}, "SERVER_PID is set but SERVER=csb"},
		{[]string{"SERVER", "csb", "PAYLOAD_PATHS", "1k=/a"}, "PAYLOAD_PATHS is set but SERVER=csb"},
		{[]string{"SCHEME", "http", "TLS_CERT", pem, "TLS_CA", pem}, "TLS_CA is set but SCHEME=http"},
		{[]string{"SCHEME", "https", "SERVER", "url"}, "SCHEME=https is supported with SERVER=csb or SERVER=nginx"},
		{[]string{"SCHEME", "https", "SERVER", "csb", "TLS_CERT", pem}, "TLS_CERT, TLS_KEY and TLS_CA go together"},
		{[]string{"SCHEME", "https", "SERVER", "csb", "TLS_CERT", pem, "TLS_KEY", dir + "/no", "TLS_CA", pem}, "TLS_KEY=" + dir + "/no: no such file on this host"},
		{[]string{"SCHEME", "https", "SERVER", "csb", "TLS_CERT", pem, "TLS_KEY", dir, "TLS_CA", pem}, "TLS_KEY=" + dir + " is not a readable file"},
		{[]string{"SCHEME", "https", "SERVER", "nginx", "TLS_CERT", pem, "TLS_KEY", pem, "TLS_CA", pem}, ""},
		{[]string{"SERVER", "csb", "HTTP", "1.1", "H2_MAX_STREAMS", "50"}, "H2_MAX_STREAMS=50 is HTTP/2's: set HTTP=2"},
		{[]string{"SERVER", "url", "HTTP", "2", "H2_MAX_STREAMS", "50"}, "H2_MAX_STREAMS is given to SERVER=csb or SERVER=nginx; SERVER=url"},
		{[]string{"SERVER", "nginx", "HTTP", "2", "STREAMS", "1,10,200"}, "STREAMS=1,10,200: 200 streams per connection is above the server's SETTINGS_MAX_CONCURRENT_STREAMS, 128 (SERVER=nginx's default)"},
		{[]string{"SERVER", "csb", "HTTP", "2", "STREAMS", "250"}, ""},
		{[]string{"SERVER", "csb", "HTTP", "2", "STREAMS", "251"}, "STREAMS=251: 251 streams per connection is above the server's SETTINGS_MAX_CONCURRENT_STREAMS, 250 (SERVER=csb's default)"},
		{[]string{"SERVER", "csb", "HTTP", "2", "STREAMS", "100", "H2_MAX_STREAMS", "50"}, "STREAMS=100: 100 streams per connection is above the server's SETTINGS_MAX_CONCURRENT_STREAMS, 50 (H2_MAX_STREAMS)"},
		{[]string{"SERVER", "nginx", "HTTP", "1.1,2", "STREAMS", "200", "H2_MAX_STREAMS", "500"}, ""},
		{[]string{"SERVER", "url", "HTTP", "2", "STREAMS", "1000"}, ""},
		{[]string{"SERVER", "nginx", "HTTP", "1.1", "STREAMS", "1000"}, ""},
		{[]string{"SERVER", "csb", "HTTP", "2", "CONNS", "10000,20k", "STREAMS", "100,3", "SCENARIOS", "active,idle"}, "STREAMS=100,3: 3 streams per connection do not divide CONNS 10000"},
		{[]string{"SERVER", "csb", "HTTP", "2", "CONNS", "1m", "STREAMS", "100", "SCENARIOS", "idle"}, ""},
		{[]string{"SERVER", "csb", "HTTP", "2", "CONNS", "10k,1m", "STREAMS", "10,100"}, ""},
		{[]string{"SERVER", "csb", "HTTP", "2", "CONNS", "10001", "STREAMS", "10", "SCENARIOS", "idle"}, ""},
	} {
		got := check(t, c.kv...)
		if (c.want == "") != (got == "") || !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: got %q, want %q...", c.kv, got, c.want)
		}
	}
	if _, err := Check([]Setting{{"K", "nosuchkind", "flag", ""}}); err == nil {
		t.Error("an unknown kind was accepted")
	}
}
