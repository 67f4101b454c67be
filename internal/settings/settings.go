// Package settings checks a runner's settings before anything starts: each
// value against its kind (a port, a list of sizes, a CPU list...), then the
// rules that span several settings (SERVER_CMD only with SERVER=cmd, the
// TLS files together, STREAMS within the server's HTTP/2 stream limit). Bash declares each setting with its kind and hands
// every resolved value here once (csb check-settings); the messages name
// the key, the value, where it came from and what is expected.
package settings

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"csbench/internal/nginxconf"
	"csbench/internal/server"
)

// MaxClients is the largest CLIENTS: the netns lab's client namespaces
// (198.18.K.0/24, one per host) and the client hosts a run drives.
const MaxClients = 8

// Longest values, in bytes: PATH_MAX for a path (and a list of client hosts
// with their addresses), 256 for any other setting (an ssh destination with
// a 253-byte host name fits). A longer one is a mistake (a file pasted into
// a value, a runaway variable), refused before it reaches a command line.
const (
	MaxPathLen  = 4096
	MaxValueLen = 256
)

// Setting is one resolved setting: its key, its kind (the check it was
// declared with), where its value came from (default, environment, flag,
// FILE:LINE) and the value.
type Setting struct {
	Key, Kind, Origin, Value string
}

type kind struct {
	valid  func(string) bool
	expect string
}

var (
	reIPv4     = regexp.MustCompile(`^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$`)
	reIPv6     = regexp.MustCompile(`^[0-9A-Fa-f:]+$`)
	reSSHDest  = regexp.MustCompile(`^([a-z_][a-z0-9_-]{0,31}@)?[A-Za-z0-9]([A-Za-z0-9.-]{0,252}|[0-9A-Fa-f:]*)$`)
	reNIC      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$`)
	reUint     = regexp.MustCompile(`^[0-9]{1,9}$`)
	reName     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	reRate     = regexp.MustCompile(`^[1-9][0-9]{0,5}(k|m|g)?bit$`)
	reSize     = regexp.MustCompile(`^[1-9][0-9]{0,8}[km]?$`)
	reCPUList  = regexp.MustCompile(`^[0-9]{1,4}(-[0-9]{1,4})?(,[0-9]{1,4}(-[0-9]{1,4})?)*$`)
	reURLPath  = regexp.MustCompile(`^/[A-Za-z0-9._~/%+=-]*$`)
	reWord     = regexp.MustCompile(`^[A-Za-z0-9_./:=,+@%-]*$`)
	reScenario = regexp.MustCompile(`^[a-z]+(,[a-z]+)*$`)
	rePorts    = regexp.MustCompile(`^([0-9]{4,5})-([0-9]{4,5})$`)
	reCloses   = regexp.MustCompile(`^(linger0|server|client)(,(linger0|server|client))*$`)
	reHands    = regexp.MustCompile(`^(full|resumed)(,(full|resumed))?$`)
	reHostItem = regexp.MustCompile(`^([^/]+)/([^/]+)/([^/]+)$`)
)

func isIP(v string) bool {
	if m := reIPv4.FindStringSubmatch(v); m != nil {
		for _, o := range m[1:] {
			if n, _ := strconv.Atoi(o); n > 255 {
				return false
			}
		}
		return true
	}
	return reIPv6.MatchString(v) && strings.Count(v, ":") >= 2
}

func isPosint(v string) bool {
	n, err := strconv.Atoi(v)
	return reUint.MatchString(v) && err == nil && n > 0
}

func isPort(v string) bool {
	n, _ := strconv.Atoi(v)
	return isPosint(v) && n <= 65535
}

// isConnCount: 20000, 20k (thousands) or 1m (millions), at most 10 million.
func isConnCount(v string) bool {
	n, ok := connCount(v)
	return ok && n <= 10000000
}

// connCount is a connection count's number: 20000, 20k, 1m.
func connCount(v string) (int, bool) {
	if !reSize.MatchString(v) {
		return 0, false
	}
	mult := 1
	switch v[len(v)-1] {
	case 'k':
		mult, v = 1000, v[:len(v)-1]
	case 'm':
		mult, v = 1000000, v[:len(v)-1]
	}
	n, _ := strconv.Atoi(v)
	return n * mult, true
}

// list: a non-empty comma-separated list whose every item is valid.
func list(item func(string) bool) func(string) bool {
	return func(v string) bool {
		for _, it := range strings.Split(v, ",") {
			if !item(it) {
				return false
			}
		}
		return true
	}
}

// orEmpty: empty, or valid.
func orEmpty(f func(string) bool) func(string) bool {
	return func(v string) bool { return v == "" || f(v) }
}

func match(re *regexp.Regexp) func(string) bool { return re.MatchString }

// isCmdline: plain words and the placeholders {ip} {port} {bin}; anything
// else (; | & $ ` < > ( ) quotes, backslashes, globs) is shell syntax the
// runner will not pass on.
func isCmdline(v string) bool {
	for _, w := range strings.Fields(v) {
		w = strings.NewReplacer("{ip}", "", "{port}", "", "{bin}", "").Replace(w)
		if !reWord.MatchString(w) {
			return false
		}
	}
	return true
}

func isPayloadPaths(v string) bool {
	return list(func(it string) bool {
		size, path, ok := strings.Cut(it, "=")
		return ok && reSize.MatchString(size) && reURLPath.MatchString(path)
	})(v)
}

func isPortRange(v string) bool {
	m := rePorts.FindStringSubmatch(v)
	if m == nil {
		return false
	}
	lo, _ := strconv.Atoi(m[1])
	hi, _ := strconv.Atoi(m[2])
	return lo >= 1024 && lo <= hi && hi <= 65535
}

// isClientHosts: space-separated DEST/ADDR[+ADDR...]/NIC entries.
func isClientHosts(v string) bool {
	for _, e := range strings.Fields(v) {
		m := reHostItem.FindStringSubmatch(e)
		if m == nil || (m[1] != "local" && !reSSHDest.MatchString(m[1])) || !reNIC.MatchString(m[3]) {
			return false
		}
		for _, a := range strings.Split(m[2], "+") {
			if !isIP(a) {
				return false
			}
		}
	}
	return true
}

// A path may hold any byte but NUL (which no bash string can hold) and a
// newline (run.env and the logs are line-based): spaces, quotes, '$', '['
// and '*' are ordinary ("/home/me/My Runs"); bash always quotes a path and
// Go never takes one for a glob pattern.
func isPath(v string) bool { return v != "" && !strings.Contains(v, "\n") }

const (
	expectIP      = "an IPv4 or IPv6 literal such as 198.18.0.1 (no hostnames)"
	expectSSH     = "an ssh destination [user@]host such as root@gtinfra02"
	expectNIC     = "an interface name such as enp1s0"
	expectSeconds = "a whole number of seconds"
	expectName    = "a name of letters, digits, '.', '_' and '-' (at most 64)"
	expectPath    = "a path on one line (any byte but a newline)"
	expectCounts  = "a comma-separated list of connection counts such as 20000,50000 or 20k,50k,100k,1m"
)

// kinds is every kind a setting may be declared with; "enum:a|b|c" is the
// one more (one of the words listed).
var kinds = map[string]kind{
	"ip":                     {isIP, expectIP},
	"ip_or_empty":            {orEmpty(isIP), expectIP},
	"ips_or_empty":           {orEmpty(list(isIP)), "a comma-separated list of IP literals such as 198.18.0.10,198.18.0.11, or empty"},
	"ssh_dest":               {match(reSSHDest), expectSSH},
	"ssh_dest_or_empty":      {orEmpty(match(reSSHDest)), expectSSH},
	"nic":                    {match(reNIC), expectNIC},
	"nic_or_empty":           {orEmpty(match(reNIC)), expectNIC},
	"uint":                   {match(reUint), expectSeconds},
	"uint_or_empty":          {orEmpty(match(reUint)), expectSeconds},
	"posint":                 {isPosint, "a positive integer"},
	"posint_or_empty":        {orEmpty(isPosint), "a positive integer, or empty for the profile's"},
	"posints":                {list(isPosint), "a comma-separated list of positive integers such as 16,64,128"},
	"posints_or_empty":       {orEmpty(list(isPosint)), "a comma-separated list of positive integers such as 2000,5000, or empty for the profile's"},
	"port":                   {isPort, "a port number 1-65535"},
	"bool":                   {func(v string) bool { return v == "0" || v == "1" }, "0 or 1"},
	"on_off":                 {func(v string) bool { return v == "on" || v == "off" }, "on or off"},
	"name":                   {match(reName), expectName},
	"name_or_empty":          {orEmpty(match(reName)), expectName},
	"rate":                   {func(v string) bool { return v == "none" || reRate.MatchString(v) }, "a tc rate such as 1gbit or 100mbit, or none"},
	"path":                   {isPath, expectPath},
	"path_or_empty":          {orEmpty(isPath), expectPath},
	"size":                   {match(reSize), "a payload size such as 1k, 10k, 100k, 1m or a byte count"},
	"sizes":                  {list(match(reSize)), "a comma-separated list of payload sizes such as 1k,10k,100k"},
	"conncounts":             {list(isConnCount), expectCounts},
	"conncounts_or_empty":    {orEmpty(list(isConnCount)), expectCounts + ", or empty for the profile's"},
	"scenarios":              {match(reScenario), "a comma-separated list of scenario names such as idle,lowrate"},
	"clients":                {func(v string) bool { n, _ := strconv.Atoi(v); return len(v) == 1 && n >= 1 && n <= MaxClients }, fmt.Sprintf("a number of client hosts from 1 to %d", MaxClients)},
	"client_hosts":           {isClientHosts, ClientHostsExpect},
	"workers_or_empty":       {func(v string) bool { return v == "" || v == "auto" || isPosint(v) }, "a positive number of workers, or auto"},
	"cmdline_or_empty":       {isCmdline, "plain words (letters, digits, . _ / : = , + @ % -) with the placeholders {ip} {port} {bin}; no ; | & $( ` < > quotes or other shell syntax"},
	"cpulist_or_empty":       {orEmpty(match(reCPUList)), "a CPU list as taskset -c takes it, such as 1, 0-1 or 0,2"},
	"url_path":               {match(reURLPath), "a URL path starting with / of letters, digits and . _ ~ / % + = -"},
	"payload_paths_or_empty": {orEmpty(isPayloadPaths), "SIZE=PATH pairs such as 1k=/static/1k.bin,10k=/static/10k.bin"},
	"closes":                 {match(reCloses), "a comma-separated list of linger0, server, client"},
	"portrange_or_empty":     {orEmpty(isPortRange), "LO-HI with 1024 <= LO <= HI <= 65535, such as 40000-40999, or empty"},
	"handshakes":             {match(reHands), "a comma-separated list of full, resumed"},
	"fraction":               {isFraction, "a fraction from 0 to 1 such as 0 or 0.001"},
	"decimal":                {match(reFraction), "a number such as 99, 99.9 or 0.1 (no sign, no exponent)"},
	"duration_or_empty":      {orEmpty(match(reDuration)), "a duration such as 10ms, 2.5ms or 1s, or empty for none"},
}

var reDuration = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(us|ms|s)$`)

// isFraction: a decimal from 0 to 1 (no sign, no exponent).
func isFraction(v string) bool {
	f, err := strconv.ParseFloat(v, 64)
	return reFraction.MatchString(v) && err == nil && f <= 1
}

var reFraction = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ClientHostsExpect is what CLIENT_HOSTS must look like.
const ClientHostsExpect = "space-separated entries DEST/ADDR[+ADDR...]/NIC, DEST an ssh destination or local, such as 'local/192.0.2.11/enp1s0 me@c2/192.0.2.12/enp1s0'"

// Known reports whether k is a kind a setting may be declared with.
func Known(k string) bool {
	_, ok := kinds[k]
	return ok || strings.HasPrefix(k, "enum:")
}

// checkValue is one setting's error, "" when its value is acceptable.
func checkValue(s Setting) string {
	max, what := MaxValueLen, "setting"
	if s.Kind == "path" || s.Kind == "path_or_empty" {
		max, what = MaxPathLen, "path"
	} else if s.Kind == "client_hosts" {
		max = MaxPathLen
	}
	if len(s.Value) > max {
		return fmt.Sprintf("%s is %d bytes long (from %s): the limit is %d bytes for a %s", s.Key, len(s.Value), s.Origin, max, what)
	}
	var ok bool
	var expect string
	if alts, isEnum := strings.CutPrefix(s.Kind, "enum:"); isEnum {
		for _, a := range strings.Split(alts, "|") {
			ok = ok || s.Value == a
		}
		expect = "one of: " + strings.ReplaceAll(alts, "|", " ")
	} else {
		k := kinds[s.Kind]
		ok, expect = k.valid(s.Value), k.expect
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("%s=%s is not valid (from %s): expected %s", s.Key, ShellQuote(s.Value), s.Origin, expect)
}

// Check returns one error line per setting whose value is wrong, in the
// order given; when every value is acceptable, the first rule across
// settings that fails (at most one line); nil when all hold. A kind that
// is not known is a programming error, returned as such.
func Check(set []Setting) ([]string, error) {
	var errs []string
	values := map[string]string{}
	for _, s := range set {
		if !Known(s.Kind) {
			return nil, fmt.Errorf("setting %s is declared with kind %q, which no check knows", s.Key, s.Kind)
		}
		if e := checkValue(s); e != "" {
			errs = append(errs, e)
		}
		values[s.Key] = s.Value
	}
	if len(errs) > 0 {
		return errs, nil
	}
	for _, rule := range []func(map[string]string) string{serverRule, tlsRule, http2Rule} {
		if e := rule(values); e != "" {
			return []string{e}, nil
		}
	}
	return nil, nil
}

// serverRule: the settings of the server under test that go with one SERVER.
func serverRule(v map[string]string) string {
	server, declared := v["SERVER"]
	if !declared {
		return ""
	}
	switch {
	case server == "cmd" && v["SERVER_CMD"] == "":
		return "SERVER=cmd needs SERVER_CMD, the command line that starts your server, e.g. SERVER_CMD='/usr/local/bin/myserver -listen {ip}:{port}'"
	case server == "cmd" && strings.Contains(v["SERVER_CMD"], "{bin}") && v["SERVER_BIN"] == "":
		return "SERVER_CMD uses {bin} but SERVER_BIN is empty: set SERVER_BIN to the local file to copy to the server host"
	case server == "cmd" && v["SERVER_BIN"] != "" && !isFile(v["SERVER_BIN"]):
		return fmt.Sprintf("SERVER_BIN=%s is not a file on this host: give the local server binary to copy to the server host", v["SERVER_BIN"])
	}
	if server != "cmd" {
		for _, k := range []string{"SERVER_BIN", "SERVER_CMD"} {
			if v[k] != "" {
				return fmt.Sprintf("%s is set but SERVER=%s: %s is for SERVER=cmd; set SERVER=cmd or unset %s", k, server, k, k)
			}
		}
	}
	switch {
	case v["SERVER_CPUS"] != "" && server == "url":
		return "SERVER_CPUS is set but SERVER=url: the runner does not start that server, so it cannot pin it; pin it yourself (taskset) or unset SERVER_CPUS"
	case v["SERVER_PID"] != "" && server != "url":
		return fmt.Sprintf("SERVER_PID is set but SERVER=%s: SERVER_PID names a server the runner did not start (SERVER=url)", server)
	case v["PAYLOAD_PATHS"] != "" && server == "csb":
		return "PAYLOAD_PATHS is set but SERVER=csb: the reference server serves /payload/<size> only; unset PAYLOAD_PATHS or choose another SERVER"
	}
	return ""
}

// Servers' SETTINGS_MAX_CONCURRENT_STREAMS when H2_MAX_STREAMS is empty:
// the reference server's (net/http's default, server.NetHTTPMaxConcurrentStreams)
// and nginx's (nginxconf.HTTP2MaxConcurrentStreams).
var defaultMaxStreams = map[string]int{"csb": server.NetHTTPMaxConcurrentStreams, "nginx": nginxconf.HTTP2MaxConcurrentStreams}

// http2Rule: H2_MAX_STREAMS goes with HTTP=2 and a server the runner
// starts (csb, nginx); STREAMS per connection within what the server
// allows (H2_MAX_STREAMS, else its default): above it the server refuses
// the streams beyond and h2load keeps fewer in flight than the cell says.
func http2Rule(v map[string]string) string {
	h2 := strings.Contains(","+v["HTTP"]+",", ",2,")
	max := v["H2_MAX_STREAMS"]
	if max != "" {
		switch {
		case !h2:
			return fmt.Sprintf("H2_MAX_STREAMS=%s is HTTP/2's: set HTTP=2, or unset H2_MAX_STREAMS", max)
		case v["SERVER"] != "csb" && v["SERVER"] != "nginx":
			return fmt.Sprintf("H2_MAX_STREAMS is given to SERVER=csb or SERVER=nginx; SERVER=%s sets its own: unset H2_MAX_STREAMS", v["SERVER"])
		}
	}
	streams, declared := v["STREAMS"]
	if !h2 || !declared || streams == "" {
		return ""
	}
	// Phase 3's active scenario keeps CONNS requests in flight as CONNS /
	// STREAMS connections: each value must divide every count.
	if conns, ok := v["CONNS"]; ok && (v["SCENARIOS"] == "" || strings.Contains(","+v["SCENARIOS"]+",", ",active,")) {
		for _, c := range strings.Split(conns, ",") {
			n, ok := connCount(c)
			for _, f := range strings.Split(streams, ",") {
				if m, err := strconv.Atoi(f); ok && err == nil && m > 0 && n%m != 0 {
					return fmt.Sprintf("STREAMS=%s: %d streams per connection do not divide CONNS %s: the active scenario keeps CONNS requests in flight as CONNS / STREAMS connections", streams, m, c)
				}
			}
		}
	}
	limit, from := defaultMaxStreams[v["SERVER"]], "SERVER="+v["SERVER"]+"'s default"
	if max != "" {
		limit, _ = strconv.Atoi(max)
		from = "H2_MAX_STREAMS"
	}
	if limit == 0 {
		return ""
	}
	for _, f := range strings.Split(streams, ",") {
		if n, err := strconv.Atoi(f); err == nil && n > limit {
			return fmt.Sprintf("STREAMS=%s: %d streams per connection is above the server's SETTINGS_MAX_CONCURRENT_STREAMS, %d (%s): lower STREAMS, or raise H2_MAX_STREAMS", streams, n, limit, from)
		}
	}
	return ""
}

var tlsFiles = []string{"TLS_CERT", "TLS_KEY", "TLS_CA"}

// tlsRule: your own TLS material goes with SCHEME=https, all three files
// together, each one readable here. Whether they make a certificate for
// SERVER_IP is csb cert -check's.
func tlsRule(v map[string]string) string {
	scheme, declared := v["SCHEME"]
	if !declared {
		return ""
	}
	n := 0
	for _, k := range tlsFiles {
		if v[k] != "" {
			n++
		}
	}
	switch {
	case scheme == "http":
		for i := len(tlsFiles) - 1; i >= 0; i-- {
			if k := tlsFiles[i]; v[k] != "" {
				return fmt.Sprintf("%s is set but SCHEME=http: set SCHEME=https to use it, or unset %s", k, k)
			}
		}
		return ""
	case v["SERVER"] == "cmd" || v["SERVER"] == "url":
		return fmt.Sprintf("SCHEME=https is supported with SERVER=csb or SERVER=nginx (the runner gives them the certificate); SERVER=%s is not yet: use SCHEME=http", v["SERVER"])
	case n != 0 && n != 3:
		return "TLS_CERT, TLS_KEY and TLS_CA go together (your certificate, its key, the CA that signed it): set all three, or none for the lab's own"
	}
	for _, k := range tlsFiles {
		p := v[k]
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Sprintf("%s=%s: no such file on this host; give the path of the PEM file", k, p)
		}
		if !isFile(p) || syscall.Access(p, 4 /* R_OK */) != nil {
			return fmt.Sprintf("%s=%s is not a readable file; give a PEM file you can read", k, p)
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// ShellQuote quotes s as bash's printf %q does, so that a message shows a
// value as the user would type it again: as it is when every byte is
// plain, with backslashes before the bytes the shell would take, and as
// $'...' when it holds a control character.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		var b strings.Builder
		b.WriteString("$'")
		for i := 0; i < len(s); i++ {
			switch c := s[i]; c {
			case '\n':
				b.WriteString(`\n`)
			case '\t':
				b.WriteString(`\t`)
			case '\r':
				b.WriteString(`\r`)
			case '\'', '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			default:
				if c < 0x20 || c == 0x7f {
					fmt.Fprintf(&b, `\%03o`, c)
				} else {
					b.WriteByte(c)
				}
			}
		}
		b.WriteString("'")
		return b.String()
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte(" '\"\\|&;()<>!{}*[?]^$`,", c) >= 0,
			c == '~' && (i == 0 || s[i-1] == '=' || s[i-1] == ':'),
			c == '#' && i == 0:
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}
