package c10kplan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
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

// pickSources chooses the source addresses, CLIENT_IP first: clean ones,
// then (netns) fresh ones to add, then busy ones with enough free ports.
func (p *Plan) pickSources(refuse refuseFunc) {
	in := &p.Scenario
	ports := p.PortsPerSource
	if !ports.Known {
		// Unknown range: plan as if one address holds them all.
		ports = known(in.Conns + PortMargin)
		p.Notes = append(p.Notes, "the client's port range was unreadable: every connection planned on "+in.ClientIP)
	}
	present := func(ip string) bool { return in.Lab == "local" || ip == in.ClientIP || in.Present[ip] }
	free := func(ip string) int64 { return ports.V - in.Sockets.InUse[ip] }
	busy := func(ip string) bool { return !p.TWReusable && in.Sockets.TimeWait[ip] >= in.TWThreshold }
	cands := Candidates(in)
	for _, ip := range cands {
		if _, ok := in.Sockets.TimeWait[ip]; ok || in.Sockets.InUse[ip] > 0 {
			p.Candidates = append(p.Candidates, SourceState{IP: ip, InUse: in.Sockets.InUse[ip], TimeWait: in.Sockets.TimeWait[ip]})
		}
	}
	target := fmt.Sprintf("%s:%d", in.ServerIP, in.ServerPort)
	src := func(ip string, add bool) Source {
		return Source{IP: ip, Add: add, Busy: busy(ip), InUse: in.Sockets.InUse[ip], TimeWait: in.Sockets.TimeWait[ip]}
	}
	busyNote := func(ip string) string {
		return fmt.Sprintf("%s has %d sockets in TIME_WAIT toward the server (connect() searches past them)", ip, in.Sockets.TimeWait[ip])
	}
	if in.Kind == "active" {
		// wrk cannot choose its source: it connects from CLIENT_IP.
		ip := in.ClientIP
		if free(ip) < in.Conns+PortMargin {
			p.RetryAfterTimeWait = !in.TWWaited
			code := CodeEphemeralPorts
			if in.Sockets.TimeWait[ip] > 0 {
				code = CodeTimeWait
			}
			refuse(code, "client", "net.ipv4.ip_local_port_range or net.ipv4.tcp_tw_reuse",
				"client ports: wrk connects from %s only, which has %d free ports toward %s (%d in TIME_WAIT) for %d connections: wait for TIME_WAIT to drain (60 s), widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1 on the client",
				ip, free(ip), target, in.Sockets.TimeWait[ip], in.Conns)
			return
		}
		if busy(ip) {
			p.Notes = append(p.Notes, busyNote(ip))
		}
		p.Sources = []Source{src(ip, false)}
	} else {
		n := int(p.ClientProcsNeeded)
		share := ceil(in.Conns, int64(n))
		taken := map[string]bool{}
		for _, pass := range []string{"clean", "add", "busy"} {
			for _, ip := range cands {
				if len(p.Sources) >= n {
					break
				}
				if taken[ip] || free(ip) < share+PortMargin {
					continue
				}
				add := false
				switch pass {
				case "clean":
					if !present(ip) || busy(ip) {
						continue
					}
				case "add":
					if in.Lab != "netns" || present(ip) || busy(ip) {
						continue
					}
					add = true
					p.Notes = append(p.Notes, fmt.Sprintf("added %s to %s", ip, in.ClientNIC))
				case "busy":
					if !present(ip) {
						continue
					}
					p.Notes = append(p.Notes, busyNote(ip))
				}
				p.Sources = append(p.Sources, src(ip, add))
				taken[ip] = true
			}
		}
		if len(p.Sources) < n {
			var have []string
			tw := int64(0)
			for _, ip := range cands {
				if present(ip) {
					have = append(have, fmt.Sprintf("%s (%d free, %d in TIME_WAIT)", ip, free(ip), in.Sockets.TimeWait[ip]))
					tw += in.Sockets.TimeWait[ip]
				}
			}
			p.RetryAfterTimeWait = !in.TWWaited
			code := CodeEphemeralPorts
			if tw > 0 {
				code = CodeTimeWait
			}
			refuse(code, "client", "CLIENT_EXTRA_IPS, net.ipv4.ip_local_port_range or net.ipv4.tcp_tw_reuse",
				"client ports: %d connections need %d source address(es) with %d free ports each toward %s; have: %s. Wait for TIME_WAIT to drain (60 s; run_c10k_beyond_lowrate_retry.sh does), add addresses (CLIENT_EXTRA_IPS), widen net.ipv4.ip_local_port_range or set net.ipv4.tcp_tw_reuse=1 on the client",
				in.Conns, n, share, target, strings.Join(have, " "))
			return
		}
	}
	n := len(p.Sources)
	c, r, q := split(in.Conns, n), split(in.ConnectRate, n), split(in.RPS, n)
	for i := range p.Sources {
		p.Sources[i].Connections, p.Sources[i].ConnectRate, p.Sources[i].RPS = c[i], r[i], q[i]
	}
}
