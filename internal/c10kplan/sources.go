package c10kplan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"csbench/internal/loadplan"
)

// Sockets counts the client's sockets toward the server per source address.
type Sockets struct {
	InUse    map[string]int64 // every socket that holds its port
	TimeWait map[string]int64
}

// ReadSockets parses `ss -Htan dst IP:PORT` (STATE RECV-Q SEND-Q LOCAL PEER
// per line). TIME_WAIT sockets count as in use unless twReusable.
func ReadSockets(r io.Reader, twReusable bool) (*Sockets, error) {
	s := &Sockets{InUse: map[string]int64{}, TimeWait: map[string]int64{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		local := f[3]
		if i := strings.LastIndex(local, ":"); i >= 0 {
			local = local[:i]
		}
		local = strings.TrimSuffix(strings.TrimPrefix(local, "["), "]")
		if f[0] == "TIME-WAIT" {
			s.TimeWait[local]++
			if twReusable {
				continue
			}
		}
		s.InUse[local]++
	}
	return s, sc.Err()
}

// ReadAddrs reads the IPv4 addresses of `ip -j -4 addr show` output.
func ReadAddrs(r io.Reader) (map[string]bool, error) {
	var links []struct {
		AddrInfo []struct {
			Family string `json:"family"`
			Local  string `json:"local"`
		} `json:"addr_info"`
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &links); err != nil {
		return nil, fmt.Errorf("not the JSON of ip -j addr show: %w", err)
	}
	out := map[string]bool{}
	for _, l := range links {
		for _, a := range l.AddrInfo {
			out[a.Local] = true
		}
	}
	return out, nil
}

// ReadSocketsFile is ReadSockets of a file.
func ReadSocketsFile(path string, twReusable bool) (*Sockets, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadSockets(f, twReusable)
}

// pick holds what choosing source addresses reads.
type pick struct {
	p      *Plan
	in     *Input
	ports  int64
	cands  []string
	target string
}

func (k *pick) present(ip string) bool {
	return k.in.Lab == "local" || ip == k.in.ClientIP || k.in.Present[ip]
}
func (k *pick) free(ip string) int64 { return k.ports - k.in.Sockets.InUse[ip] }
func (k *pick) tw(ip string) int64   { return k.in.Sockets.TimeWait[ip] }

// fastFree is the even ports of ip still free: connect() takes the even
// ones first, so the sockets an address has toward the server (TIME_WAIT
// included) hold even ports first. Past them its connects crawl.
func (k *pick) fastFree(ip string) int64 { return k.ports/2 - k.in.Sockets.InUse[ip] }
func (k *pick) busy(ip string) bool      { return !k.p.TWReusable && k.tw(ip) >= k.in.TWThreshold }
func (k *pick) source(ip string, add bool) Source {
	return Source{IP: ip, Add: add, Busy: k.busy(ip), InUse: k.in.Sockets.InUse[ip], TimeWait: k.tw(ip)}
}
func (k *pick) busyNote(ip string) string {
	return fmt.Sprintf("%s has %d sockets in TIME_WAIT toward the server (connect() searches past them)", ip, k.tw(ip))
}

// pickSources chooses the source addresses and splits the connections,
// the connect rate and the requests across them.
func (p *Plan) pickSources() {
	in := &p.Scenario
	k := &pick{p: p, in: in, ports: p.PortsPerSource.V, cands: Candidates(in), target: fmt.Sprintf("%s:%d", in.ServerIP, in.ServerPort)}
	if !p.PortsPerSource.Known {
		// Unknown range: plan as if one address holds them all.
		k.ports = in.Conns + PortMargin
		p.note(true, "the client's port range was unreadable: every connection planned on "+in.ClientIP)
	}
	for _, ip := range k.cands {
		if _, ok := in.Sockets.TimeWait[ip]; ok || in.Sockets.InUse[ip] > 0 {
			p.Candidates = append(p.Candidates, SourceState{IP: ip, InUse: in.Sockets.InUse[ip], TimeWait: k.tw(ip)})
		}
	}
	if in.Kind == "active" {
		k.active()
	} else {
		k.spread()
	}
	if len(p.Refusals) > 0 {
		return
	}
	n := len(p.Sources)
	c, r, q := loadplan.Split(in.Conns, n), loadplan.Split(in.ConnectRate, n), loadplan.Split(in.RPS, n)
	for i := range p.Sources {
		p.Sources[i].Connections, p.Sources[i].ConnectRate, p.Sources[i].RPS = c[i], r[i], q[i]
	}
}

// active: wrk cannot choose its source: it connects from CLIENT_IP.
func (k *pick) active() {
	p, in, ip := k.p, k.in, k.in.ClientIP
	if k.free(ip) < in.Conns+PortMargin {
		p.RetryAfterTimeWait = !in.TWWaited
		code := CodeEphemeralPorts
		if k.tw(ip) > 0 {
			code = CodeTimeWait
		}
		p.refuse(code, "client", "net.ipv4.ip_local_port_range or net.ipv4.tcp_tw_reuse",
			"client ports: wrk connects from %s only, which has %d free ports toward %s (%d in TIME_WAIT) for %d connections: wait for TIME_WAIT to drain (60 s), widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1 on the client",
			ip, k.free(ip), k.target, k.tw(ip), in.Conns)
		return
	}
	// connect() takes the even ports first (see size): when this
	// address's TIME_WAIT pushes wrk's connections past the even half,
	// where each connect scans the whole half first, wait for it to drain
	// once. (Measured: 9,553 in TIME_WAIT from the run before, 10,000
	// connections: wrk's 5 s took 9.4 s and completed no request.)
	if need := in.Conns + PortMargin; !in.TWWaited && k.tw(ip) > 0 && k.fastFree(ip) < need && k.fastFree(ip)+k.tw(ip) >= need {
		p.RetryAfterTimeWait = true
		p.refuse(CodeTimeWait, "client", "net.ipv4.tcp_tw_reuse",
			"client ports: wrk connects from %s only, where %d sockets in TIME_WAIT toward %s hold the even ports connect() takes first, leaving %d for %d connections (past them each connect scans): wait for TIME_WAIT to drain (60 s) or set net.ipv4.tcp_tw_reuse=1 on the client",
			ip, k.tw(ip), k.target, k.fastFree(ip), in.Conns)
		return
	}
	if k.busy(ip) {
		p.note(false, k.busyNote(ip))
	}
	p.Sources = []Source{k.source(ip, false)}
}

// spread: one connclient process per source address, CLIENT_IP first:
// clean addresses, then (netns) fresh ones to add, then busy ones with
// enough free ports.
func (k *pick) spread() {
	p, in := k.p, k.in
	n := int(p.ClientProcsNeeded)
	share := ceil(in.Conns, int64(n))
	taken := map[string]bool{}
	var notes []string
	for _, pass := range []string{"clean", "add", "busy"} {
		for _, ip := range k.cands {
			if len(p.Sources) >= n {
				break
			}
			if taken[ip] || k.free(ip) < share+PortMargin || (p.FastPorts && k.fastFree(ip) < share+PortMargin) {
				continue
			}
			add := false
			switch pass {
			case "clean":
				if !k.present(ip) || k.busy(ip) {
					continue
				}
			case "add":
				if in.Lab != "netns" || k.present(ip) || k.busy(ip) {
					continue
				}
				add = true
				notes = append(notes, fmt.Sprintf("added %s to %s", ip, in.ClientNIC))
			case "busy":
				if !k.present(ip) {
					continue
				}
				notes = append(notes, k.busyNote(ip))
			}
			p.Sources = append(p.Sources, k.source(ip, add))
			taken[ip] = true
		}
	}
	if len(p.Sources) == n {
		for _, n := range notes {
			p.note(false, n)
		}
		return
	}
	var have []string
	tw := int64(0)
	for _, ip := range k.cands {
		if k.present(ip) {
			have = append(have, fmt.Sprintf("%s (%d free, %d in TIME_WAIT)", ip, k.free(ip), k.tw(ip)))
			tw += k.tw(ip)
		}
	}
	p.RetryAfterTimeWait = !in.TWWaited
	code := CodeEphemeralPorts
	if tw > 0 {
		code = CodeTimeWait
	}
	p.refuse(code, "client", "CLIENT_EXTRA_IPS, net.ipv4.ip_local_port_range or net.ipv4.tcp_tw_reuse",
		"client ports: %d connections need %d source address(es) with %d free ports each toward %s; have: %s. Wait for TIME_WAIT to drain (60 s; run_c10k_beyond_lowrate_retry.sh does), add addresses (CLIENT_EXTRA_IPS), widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1 on the client",
		in.Conns, n, share, k.target, strings.Join(have, " "))
}
