// Package phase4 summarizes and reports Phase 4, connection setup and
// teardown: new connections per second (churn) by who closes them, the
// listen backlog against a burst of connects, and the highest accept rate
// the server sustains. It also predicts, from the settings the runner read
// before each cell, which wall a churn cell meets and when (Predict); the
// runner logs the prediction (csb conn-predict) and the report sets it
// beside what happened. Both compute it here, once.
//
// A cell runs on every client host at once (one host the case N = 1), each
// with its share of the burst or the rate. Its raw files, per client host
// <client> ("client" with one host, else client1..clientN):
// raw/<client>/<cell>.json (connclient churn or burst), .log (its
// progress) and .timing.json (csb start-at: when it was due, started,
// ended); raw/<cell>.facts.<host>.env (the sysctls and /proc/net/sockstat's
// TCP line of the server and each client host before the cell); around
// it, nstat and sockstat snapshots (monitors/<host>/counters), sar's
// TIME_WAIT once a second (monitors/<host>/sar.json) and each host's
// connclient (monitors/<client>/pidstat-connclient-<cell>.txt). A run
// made before each client host had its own directory (run.env
// schema_version 1) has raw/<cell>.json and .log and no timing. The
// hosts' results merge into the cell's figures (merge.go), each host's own
// figures and prediction kept beside them (c.Clients).
package phase4

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"csbench/internal/decimal"
	"csbench/internal/kv"
)

// TimeWaitS is how long Linux keeps a socket in TIME_WAIT: TCP_TIMEWAIT_LEN,
// 60 s, a constant of the kernel (net.ipv4.tcp_fin_timeout is FIN_WAIT_2's,
// not TIME_WAIT's).
const TimeWaitS = 60

// TWReuseS is how soon tcp_tw_reuse lets connect() take a port whose socket
// is in TIME_WAIT toward the same peer: once the timestamp clock has moved
// on, 1 s.
const TWReuseS = 1

// Wall codes of a prediction.
const (
	WallPorts = "ephemeral_ports" // client ports held in TIME_WAIT run out
	WallNone  = "none"            // nothing in the settings read limits the rate
)

// Facts are the settings of one host as the runner read them (KEY=VALUE).
type Facts map[string]string

// ReadFacts reads a facts file.
func ReadFacts(path string) (Facts, error) {
	m, err := kv.Read(path, "=")
	return Facts(m), err
}

// TimeWait is the TIME_WAIT count of the sockstat line ("TCP: inuse 5
// orphan 0 tw 2 alloc 7 mem 1"), or -1.
func (f Facts) TimeWait() int {
	fs := strings.Fields(f["sockstat"])
	for i := 0; i+1 < len(fs); i++ {
		if fs[i] == "tw" {
			if n, err := strconv.Atoi(fs[i+1]); err == nil {
				return n
			}
		}
	}
	return -1
}

func (f Facts) int(key string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimSpace(f[key]))
	return n, err == nil
}

// Ports returns the size of ip_local_port_range less the reserved ports in
// it, and the range as read.
func (f Facts) Ports() (int, string, error) {
	r := strings.Fields(f["net.ipv4.ip_local_port_range"])
	if len(r) != 2 {
		return 0, "", fmt.Errorf("net.ipv4.ip_local_port_range %q: want two numbers", f["net.ipv4.ip_local_port_range"])
	}
	lo, err1 := strconv.Atoi(r[0])
	hi, err2 := strconv.Atoi(r[1])
	if err1 != nil || err2 != nil || lo > hi {
		return 0, "", fmt.Errorf("net.ipv4.ip_local_port_range %q: not LO HI", f["net.ipv4.ip_local_port_range"])
	}
	n := hi - lo + 1
	for _, part := range strings.Split(strings.TrimSpace(f["net.ipv4.ip_local_reserved_ports"]), ",") {
		if part == "" {
			continue
		}
		a, b, ok := strings.Cut(part, "-")
		x, e1 := strconv.Atoi(a)
		y := x
		var e2 error
		if ok {
			y, e2 = strconv.Atoi(b)
		}
		if e1 != nil || e2 != nil {
			continue
		}
		x, y = max(x, lo), min(y, hi)
		if y >= x {
			n -= y - x + 1
		}
	}
	return n, fmt.Sprintf("%d-%d", lo, hi), nil
}

// Input is what one churn cell's prediction reads.
type Input struct {
	Client, Server Facts
	Close          string // client, server, linger0
	RatePerS       float64
	DurationS      float64
	Sources        int    // client source addresses (each has its own ports toward one server port)
	Lab            string // local: tcp_tw_reuse=2 applies (loopback)
}

// Prediction is what a churn cell should show, from the settings alone.
type Prediction struct {
	Wall string `json:"wall"` // WallPorts or WallNone
	// SustainableRatePerS is the steady-state ceiling the wall sets: ports
	// x sources / the time a port stays taken; nil when no wall.
	SustainableRatePerS *float64 `json:"sustainable_rate_per_s"`
	// CellRatePerS is the rate the cell should achieve over its own
	// duration: the target, or less when the free ports run out first.
	CellRatePerS float64 `json:"cell_rate_per_s"`
	// EAddrNotAvail is true when the cell should see "cannot assign
	// requested address"; ExhaustS is when (seconds into the cell).
	EAddrNotAvail bool     `json:"eaddrnotavail"`
	ExhaustS      *float64 `json:"exhaust_s"`
	Ports         int      `json:"ports"`      // per source address
	PortRange     string   `json:"port_range"` // as read
	FreeAtStart   int      `json:"free_ports_at_start"`
	PortHoldS     float64  `json:"port_hold_s"` // how long a closed connection keeps its client port
	TWReuse       bool     `json:"tw_reuse"`    // tcp_tw_reuse lets connect() reuse TIME_WAIT ports
	// ClientTimeWait and ServerTimeWait: sockets in TIME_WAIT the cell
	// should leave at its end (capped by tcp_max_tw_buckets).
	ClientTimeWait int      `json:"client_time_wait"`
	ServerTimeWait int      `json:"server_time_wait"`
	Notes          []string `json:"notes"`
}

// Predict computes a churn cell's prediction. The arithmetic: a connection
// the client closes first keeps its (source address, port) toward the
// server's address and port for TIME_WAIT (60 s), or 1 s when tcp_tw_reuse
// applies (1; 2 on loopback) with timestamps on; so one source address
// sustains ports / that many connections a second (28,232 / 60 ≈ 470 with
// the default range). Ports already in TIME_WAIT at the start are not free;
// the cell runs out of ports after free / rate seconds when that comes
// before the first ones are released. A connection the server closes, or
// the client resets (SO_LINGER=0), leaves no TIME_WAIT on the client: no
// port wall. The server's TIME_WAIT, for the server variant, costs the
// server memory only: at most one socket per client port used (a new SYN on
// its 4-tuple takes it over; connect() uses half the range, one parity,
// while ports are free) and tcp_max_tw_buckets.
func Predict(in Input) (*Prediction, error) {
	ports, rng, err := in.Client.Ports()
	if err != nil {
		return nil, err
	}
	if in.Sources < 1 {
		in.Sources = 1
	}
	p := &Prediction{Wall: WallNone, Ports: ports, PortRange: rng, CellRatePerS: in.RatePerS, Notes: []string{}}
	reuse, _ := in.Client.int("net.ipv4.tcp_tw_reuse")
	ts, tsOK := in.Client.int("net.ipv4.tcp_timestamps")
	p.TWReuse = (reuse == 1 || reuse == 2 && in.Lab == "local") && (!tsOK || ts != 0)
	p.PortHoldS = TimeWaitS
	if p.TWReuse {
		p.PortHoldS = TWReuseS
	}
	twBefore := max(in.Client.TimeWait(), 0)
	p.FreeAtStart = max(ports*in.Sources-twBefore, 0)
	if twBefore > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("%d client sockets were in TIME_WAIT before the cell (counted as taken ports)", twBefore))
	}
	held := math.Min(in.DurationS, TimeWaitS)
	switch in.Close {
	case "client":
		if !p.TWReuse {
			p.Wall = WallPorts
			wall := float64(ports*in.Sources) / p.PortHoldS
			p.SustainableRatePerS = ptr(decimal.Round(wall, 1))
			need := in.RatePerS * math.Min(in.DurationS, p.PortHoldS)
			if need > float64(p.FreeAtStart) {
				p.EAddrNotAvail = true
				p.ExhaustS = ptr(decimal.Round(float64(p.FreeAtStart)/in.RatePerS, 3))
				// Free ports, then what TIME_WAIT releases once the first
				// ones expire (at the wall's rate).
				got := float64(p.FreeAtStart) + math.Max(0, in.DurationS-p.PortHoldS)*wall
				p.CellRatePerS = math.Min(in.RatePerS, got/in.DurationS)
			}
		} else {
			p.Notes = append(p.Notes, fmt.Sprintf("tcp_tw_reuse=%d with timestamps: connect() reuses a TIME_WAIT port after %d s", reuse, TWReuseS))
			wall := float64(ports*in.Sources) / p.PortHoldS
			p.SustainableRatePerS = ptr(decimal.Round(wall, 1))
			p.Wall = WallPorts
			if in.RatePerS > wall {
				p.EAddrNotAvail = true
				p.ExhaustS = ptr(decimal.Round(float64(p.FreeAtStart)/in.RatePerS, 3))
				p.CellRatePerS = wall
			}
		}
		// One TIME_WAIT socket per port at most (tcp_tw_reuse takes them
		// over), and tcp_max_tw_buckets.
		p.ClientTimeWait = capTW(min(int(p.CellRatePerS*held), ports*in.Sources), in.Client)
	case "server":
		// A new SYN on the 4-tuple of a server TIME_WAIT socket takes it
		// over (timestamps newer), so the server holds at most one per
		// client port the client uses; and connect() takes ports of one
		// parity first (Linux leaves the other half to bind()), so a client
		// whose ports are freed at once uses half its range.
		want := int(in.RatePerS * held)
		used := ports * in.Sources / 2
		p.ServerTimeWait = capTW(min(want, used), in.Server)
		if want > used {
			p.Notes = append(p.Notes, fmt.Sprintf("the client reuses %d ports (half its range: connect() takes ports of one parity first) within TIME_WAIT: each new SYN on a 4-tuple the server holds in TIME_WAIT takes that socket over, so the server keeps at most one per port used", used))
		}
		if p.ServerTimeWait < min(want, used) {
			p.Notes = append(p.Notes, "the server's TIME_WAIT reaches tcp_max_tw_buckets: the kernel drops the excess (\"time wait bucket table overflow\"), no failure")
		}
	case "linger0":
	default:
		return nil, fmt.Errorf("close %q: want client, server or linger0", in.Close)
	}
	p.CellRatePerS = decimal.Round(p.CellRatePerS, 1)
	return p, nil
}

// Combine is the prediction of a cell split across client hosts, from
// each host's own (Predict on that host's settings and its share of the
// rate; labels name the hosts, in order): each host has its own source
// address and ports, so the cell's rates and counts are the hosts' added
// up (cell and sustainable rate, ports, free ports, client TIME_WAIT; the
// server's TIME_WAIT too, one socket per client 4-tuple, capped at the
// server's tcp_max_tw_buckets); the port wall is met when any host meets
// it, first at the earliest host's exhaust time; a sustainable rate only
// when every host has one (else no single wall: nil). The combination of
// one prediction is that prediction.
func Combine(labels []string, ps []*Prediction, server Facts) *Prediction {
	if len(ps) == 1 {
		return ps[0]
	}
	out := &Prediction{Wall: WallNone, TWReuse: true, Notes: []string{}}
	sustainable, allWalls := 0.0, true
	ranges := map[string]bool{}
	var perHost []string
	cell := 0.0
	for i, p := range ps {
		if p.Wall != WallNone {
			out.Wall = p.Wall
		}
		if p.SustainableRatePerS == nil {
			allWalls = false
		} else {
			sustainable += *p.SustainableRatePerS
		}
		cell += p.CellRatePerS
		out.EAddrNotAvail = out.EAddrNotAvail || p.EAddrNotAvail
		out.ExhaustS = earliest([]*float64{out.ExhaustS, p.ExhaustS})
		out.Ports += p.Ports
		out.FreeAtStart += p.FreeAtStart
		out.PortHoldS = max(out.PortHoldS, p.PortHoldS)
		out.TWReuse = out.TWReuse && p.TWReuse
		out.ClientTimeWait += p.ClientTimeWait
		out.ServerTimeWait += p.ServerTimeWait
		ranges[p.PortRange] = true
		perHost = append(perHost, labels[i]+" "+p.PortRange)
		for _, n := range p.Notes {
			out.Notes = append(out.Notes, labels[i]+": "+n)
		}
	}
	if allWalls {
		out.SustainableRatePerS = ptr(decimal.Round(sustainable, 1))
	}
	out.CellRatePerS = decimal.Round(cell, 1)
	out.PortRange = ps[0].PortRange
	if len(ranges) > 1 {
		out.PortRange = strings.Join(perHost, ", ")
	}
	out.ServerTimeWait = capTW(out.ServerTimeWait, server)
	return out
}

// capTW caps a TIME_WAIT count at the host's tcp_max_tw_buckets.
func capTW(n int, f Facts) int {
	if m, ok := f.int("net.ipv4.tcp_max_tw_buckets"); ok && n > m {
		return m
	}
	return n
}

func ptr[T any](v T) *T { return &v }

// Line is the prediction on one line of KEY=VALUE, as the runner logs it.
func (p *Prediction) Line() string {
	s := func(v *float64) string {
		if v == nil {
			return "none"
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	return fmt.Sprintf("wall=%s sustainable_rate_per_s=%s cell_rate_per_s=%s eaddrnotavail=%t exhaust_s=%s ports=%d port_range=%s free_ports_at_start=%d port_hold_s=%g client_time_wait=%d server_time_wait=%d",
		p.Wall, s(p.SustainableRatePerS), strconv.FormatFloat(p.CellRatePerS, 'f', -1, 64), p.EAddrNotAvail, s(p.ExhaustS),
		p.Ports, p.PortRange, p.FreeAtStart, p.PortHoldS, p.ClientTimeWait, p.ServerTimeWait)
}

// PredictOverflow says whether a burst of n connects, issued in issueS
// seconds into a listen backlog of backlog, overflows a server that
// accepts at most one connection per everyMs (csb-server -accept-every):
// 1 when it must (more connects than the queue holds plus what the server
// can have taken while they were issued, n > backlog + issueS/every + 1),
// 0 when it cannot (n <= backlog), nil in between or when a figure is
// missing. It holds whatever the host's speed: the known answer of the
// backlog cells.
func PredictOverflow(n, backlog, issueS, everyMs float64) *float64 {
	if math.IsNaN(n) || math.IsNaN(backlog) || math.IsNaN(issueS) || math.IsNaN(everyMs) || everyMs <= 0 {
		return nil
	}
	v := math.NaN()
	switch {
	case n <= backlog:
		v = 0
	case n > backlog+math.Floor(issueS*1000/everyMs)+1:
		v = 1
	default:
		return nil
	}
	return &v
}
