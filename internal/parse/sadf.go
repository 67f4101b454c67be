package parse

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// SadfReport is what `sadf -j FILE -- -u -r -n DEV,TCP,ETCP,SOCK` printed for
// a binary file written by `sar -o FILE INTERVAL`.
//
// sar -o forks `sadc INTERVAL -Z -S XALL FILE`, so the file holds every
// activity, these included; the activities printed are chosen when sadf
// reads it. FILE must not exist beforehand: sadc appends to an existing file
// of the same format. The runner must not give sadf -t or -T: without them
// sadf prints UTC and says so ("utc": 1), which ParseSadf requires. `-u ALL`
// and `-P ALL` may be added (per-CPU lines, %usr/%sys/%irq/%soft instead of
// %user/%system); `-r ALL` adds memory fields that are ignored here.
//
// Stopping: a signal to sar alone leaves its sadc running until its next
// write to sar's pipe (up to one interval, maybe one more record). Start sar
// under setsid and send SIGINT to its process group (kill -INT -- -PID), or
// signal sadc (the child of that PID) before sar; sar and sadc both handle
// SIGINT and leave a whole file. A binary file cut mid-record (sadc killed,
// disk full) makes sadf print "End of system activity file unexpected" on
// stderr, exit 0 and still close its JSON over the whole records; ParseSadf
// reads that like any other.
type SadfReport struct {
	Nodename string
	NumCPUs  int
	Samples  []SadfSample
	// Truncated is true when sadf's JSON itself ended early (sadf killed).
	Truncated bool
}

// SadfSample is one interval of sar. A nil activity was not in the file or
// not asked of sadf.
type SadfSample struct {
	Time      time.Time // end of the interval, UTC, to the second
	IntervalS int       // the interval's length as sadf states it
	CPUs      []SadfCPU // "all" first; per CPU as well with -P ALL
	Memory    *SadfMemory
	NetDev    []SadfNetDev // one per interface
	Sock      *SadfSock
	TCP       *SadfTCP
	ETCP      *SadfETCP
	Queue     *SadfQueue
}

// SadfQueue is "queue" (sar -q): the kernel's run queue and load averages
// at the sample time.
type SadfQueue struct {
	RunqSz  float64 // tasks running or waiting for a CPU (procs_running)
	PlistSz float64 // tasks in the task list
	Ldavg1  float64
	Blocked float64 // tasks blocked on I/O
}

// SadfCPU is one "cpu-load" line, in percent of the CPU's time. With -u the
// line has %user (which includes guest time) and %system (which includes irq
// and softirq time); with -u ALL it has %usr, %sys, %irq, %soft, %guest and
// %gnice, each on its own. The fields of the other form are nil.
type SadfCPU struct {
	CPU           string // "all", "0", "1", ...
	NicePercent   float64
	IowaitPercent float64
	StealPercent  float64
	IdlePercent   float64

	UserPercent   *float64 // -u: includes guest
	SystemPercent *float64 // -u: includes irq and soft

	UsrPercent   *float64 // -u ALL
	SysPercent   *float64 // -u ALL
	IRQPercent   *float64 // -u ALL
	SoftPercent  *float64 // -u ALL
	GuestPercent *float64 // -u ALL
	GnicePercent *float64 // -u ALL
}

// BusyPercent is 100 - idle: every state but idle counts as busy, iowait
// and steal included.
func (c SadfCPU) BusyPercent() float64 { return 100 - c.IdlePercent }

// SadfMemory is the "memory" activity (sar -r), in kB.
type SadfMemory struct {
	FreeKB        uint64
	AvailKB       uint64
	UsedKB        uint64
	UsedPercent   float64
	BuffersKB     uint64
	CachedKB      uint64
	CommitKB      uint64
	CommitPercent float64
	ActiveKB      uint64
	InactiveKB    uint64
	DirtyKB       uint64
}

// SadfNetDev is one interface's "net-dev" line (sar -n DEV). kB is 1024 bytes.
type SadfNetDev struct {
	Iface         string
	RxPckPerS     float64
	TxPckPerS     float64
	RxKBPerS      float64
	TxKBPerS      float64
	RxCmpPerS     float64
	TxCmpPerS     float64
	RxMcstPerS    float64
	IfUtilPercent float64
}

// SadfSock is "net-sock" (sar -n SOCK): sockets in use at the sample time.
type SadfSock struct {
	TotSck int // all sockets
	TCPSck int // TCP sockets in use
	UDPSck int
	RawSck int
	IPFrag int // IP fragments queued
	TCPTW  int // TCP sockets in TIME_WAIT
}

// SadfTCP is "net-tcp" (sar -n TCP), per second over the interval.
type SadfTCP struct {
	ActiveOpensPerS  float64 // connect()s: CLOSED -> SYN-SENT
	PassiveOpensPerS float64 // accepts: LISTEN -> SYN-RCVD
	InSegsPerS       float64
	OutSegsPerS      float64
}

// SadfETCP is "net-etcp" (sar -n ETCP), per second over the interval.
type SadfETCP struct {
	AttemptFailsPerS float64 // connection attempts that failed
	EstabResetsPerS  float64 // established connections reset
	RetransSegsPerS  float64 // segments retransmitted
	InSegErrsPerS    float64 // segments received in error
	OutRstsPerS      float64 // segments sent with RST
}

// ParseSadf reads the output of `sadf -j FILE -- ACTIVITIES`. It fails on a
// sample whose time is not UTC ("utc": 0: sadf was given -t or -T) and on an
// activity that lacks a field sysstat 12.6 prints.
func ParseSadf(r io.Reader) (*SadfReport, error) {
	doc, err := readSysstat(r)
	if err != nil {
		return nil, fmt.Errorf("sadf: %w", err)
	}
	rep := &SadfReport{Truncated: doc.truncated}
	if rep.Nodename, err = doc.headerString("nodename"); err != nil {
		return nil, fmt.Errorf("sadf: %w", err)
	}
	if rep.NumCPUs, err = doc.headerInt("number-of-cpus"); err != nil {
		return nil, fmt.Errorf("sadf: %w", err)
	}
	for i, raw := range doc.stats {
		s, err := parseSadfSample(raw)
		if err != nil {
			return nil, fmt.Errorf("sadf: sample %d: %w", i+1, err)
		}
		rep.Samples = append(rep.Samples, s)
	}
	return rep, nil
}

func parseSadfSample(raw json.RawMessage) (SadfSample, error) {
	var in struct {
		Timestamp *struct {
			Date     string `json:"date"`
			Time     string `json:"time"`
			UTC      int    `json:"utc"`
			Interval int    `json:"interval"`
		} `json:"timestamp"`
		CPULoad []map[string]json.RawMessage `json:"cpu-load"`
		Memory  map[string]json.RawMessage   `json:"memory"`
		Queue   map[string]json.RawMessage   `json:"queue"`
		Network *struct {
			NetDev  []map[string]json.RawMessage `json:"net-dev"`
			NetSock map[string]json.RawMessage   `json:"net-sock"`
			NetTCP  map[string]json.RawMessage   `json:"net-tcp"`
			NetETCP map[string]json.RawMessage   `json:"net-etcp"`
		} `json:"network"`
	}
	var s SadfSample
	if err := json.Unmarshal(raw, &in); err != nil {
		return s, err
	}
	ts := in.Timestamp
	if ts == nil {
		return s, fmt.Errorf("no timestamp")
	}
	if ts.UTC != 1 {
		return s, fmt.Errorf("time %s %s is not UTC (\"utc\": %d): run sadf without -t or -T", ts.Date, ts.Time, ts.UTC)
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05", ts.Date+" "+ts.Time, time.UTC)
	if err != nil {
		return s, fmt.Errorf("timestamp: %w", err)
	}
	s.Time, s.IntervalS = t, ts.Interval
	at := ts.Date + " " + ts.Time

	for _, obj := range in.CPULoad {
		c, err := sadfCPU(obj)
		if err != nil {
			return s, fmt.Errorf("%s: cpu-load: %w", at, err)
		}
		s.CPUs = append(s.CPUs, c)
	}
	if in.Memory != nil {
		if s.Memory, err = sadfMemory(in.Memory); err != nil {
			return s, fmt.Errorf("%s: memory: %w", at, err)
		}
	}
	if in.Queue != nil {
		var v SadfQueue
		err := requireFloats(in.Queue, map[string]*float64{
			"runq-sz": &v.RunqSz, "plist-sz": &v.PlistSz, "ldavg-1": &v.Ldavg1, "blocked": &v.Blocked,
		})
		if err != nil {
			return s, fmt.Errorf("%s: queue: %w", at, err)
		}
		s.Queue = &v
	}
	if n := in.Network; n != nil {
		for _, obj := range n.NetDev {
			d, err := sadfNetDev(obj)
			if err != nil {
				return s, fmt.Errorf("%s: net-dev: %w", at, err)
			}
			s.NetDev = append(s.NetDev, d)
		}
		if n.NetSock != nil {
			if s.Sock, err = sadfSock(n.NetSock); err != nil {
				return s, fmt.Errorf("%s: net-sock: %w", at, err)
			}
		}
		if n.NetTCP != nil {
			var v SadfTCP
			err := requireFloats(n.NetTCP, map[string]*float64{
				"active": &v.ActiveOpensPerS, "passive": &v.PassiveOpensPerS,
				"iseg": &v.InSegsPerS, "oseg": &v.OutSegsPerS,
			})
			if err != nil {
				return s, fmt.Errorf("%s: net-tcp: %w", at, err)
			}
			s.TCP = &v
		}
		if n.NetETCP != nil {
			var v SadfETCP
			err := requireFloats(n.NetETCP, map[string]*float64{
				"atmptf": &v.AttemptFailsPerS, "estres": &v.EstabResetsPerS,
				"retrans": &v.RetransSegsPerS, "isegerr": &v.InSegErrsPerS, "orsts": &v.OutRstsPerS,
			})
			if err != nil {
				return s, fmt.Errorf("%s: net-etcp: %w", at, err)
			}
			s.ETCP = &v
		}
	}
	return s, nil
}

func sadfCPU(obj map[string]json.RawMessage) (SadfCPU, error) {
	var c SadfCPU
	if err := json.Unmarshal(obj["cpu"], &c.CPU); err != nil {
		return c, fmt.Errorf("cpu name: %w", err)
	}
	err := requireFloats(obj, map[string]*float64{
		"nice": &c.NicePercent, "iowait": &c.IowaitPercent,
		"steal": &c.StealPercent, "idle": &c.IdlePercent,
	})
	if err == nil {
		err = optionalFloats(obj, map[string]**float64{
			"user": &c.UserPercent, "system": &c.SystemPercent,
			"usr": &c.UsrPercent, "sys": &c.SysPercent, "irq": &c.IRQPercent,
			"soft": &c.SoftPercent, "guest": &c.GuestPercent, "gnice": &c.GnicePercent,
		})
	}
	if err == nil && (c.UserPercent == nil) == (c.UsrPercent == nil) {
		err = fmt.Errorf(`want either "user" (-u) or "usr" (-u ALL)`)
	}
	if err != nil {
		return c, fmt.Errorf("cpu %q: %w", c.CPU, err)
	}
	return c, nil
}

func sadfMemory(obj map[string]json.RawMessage) (*SadfMemory, error) {
	var m SadfMemory
	for key, p := range map[string]*uint64{
		"memfree": &m.FreeKB, "avail": &m.AvailKB, "memused": &m.UsedKB,
		"buffers": &m.BuffersKB, "cached": &m.CachedKB, "commit": &m.CommitKB,
		"active": &m.ActiveKB, "inactive": &m.InactiveKB, "dirty": &m.DirtyKB,
	} {
		raw, ok := obj[key]
		if !ok {
			return nil, fmt.Errorf("missing field %q", key)
		}
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
	}
	err := requireFloats(obj, map[string]*float64{
		"memused-percent": &m.UsedPercent, "commit-percent": &m.CommitPercent,
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

func sadfNetDev(obj map[string]json.RawMessage) (SadfNetDev, error) {
	var d SadfNetDev
	if err := json.Unmarshal(obj["iface"], &d.Iface); err != nil {
		return d, fmt.Errorf("iface: %w", err)
	}
	err := requireFloats(obj, map[string]*float64{
		"rxpck": &d.RxPckPerS, "txpck": &d.TxPckPerS, "rxkB": &d.RxKBPerS, "txkB": &d.TxKBPerS,
		"rxcmp": &d.RxCmpPerS, "txcmp": &d.TxCmpPerS, "rxmcst": &d.RxMcstPerS,
		"ifutil-percent": &d.IfUtilPercent,
	})
	if err != nil {
		return d, fmt.Errorf("iface %q: %w", d.Iface, err)
	}
	return d, nil
}

func sadfSock(obj map[string]json.RawMessage) (*SadfSock, error) {
	var k SadfSock
	for key, p := range map[string]*int{
		"totsck": &k.TotSck, "tcpsck": &k.TCPSck, "udpsck": &k.UDPSck,
		"rawsck": &k.RawSck, "ip-frag": &k.IPFrag, "tcp-tw": &k.TCPTW,
	} {
		raw, ok := obj[key]
		if !ok {
			return nil, fmt.Errorf("missing field %q", key)
		}
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
	}
	return &k, nil
}

// Interface returns the net-dev line for iface in s, if there is one.
func (s SadfSample) Interface(iface string) (SadfNetDev, bool) {
	for _, d := range s.NetDev {
		if d.Iface == iface {
			return d, true
		}
	}
	return SadfNetDev{}, false
}

// Mean averages field over the samples stamped inside w for which field
// returns ok. It returns an error wrapping ErrNoSamples if there is none.
//
// For example, the mean retransmission rate:
//
//	rep.Mean(w, func(s SadfSample) (float64, bool) {
//		if s.ETCP == nil {
//			return 0, false
//		}
//		return s.ETCP.RetransSegsPerS, true
//	})
func (r *SadfReport) Mean(w Window, field func(SadfSample) (float64, bool)) (float64, error) {
	var xs []float64
	for _, s := range r.Samples {
		if !w.Contains(s.Time) {
			continue
		}
		if x, ok := field(s); ok {
			xs = append(xs, x)
		}
	}
	return meanOf(xs, fmt.Sprintf("sadf in %v", w))
}

// MeanNetDev averages field of interface iface over the samples stamped
// inside w, e.g. rep.MeanNetDev(w, "eth0", func(d SadfNetDev) float64 { return
// d.RxKBPerS }). It returns an error wrapping ErrNoSamples if no sample in w
// has the interface.
func (r *SadfReport) MeanNetDev(w Window, iface string, field func(SadfNetDev) float64) (float64, error) {
	m, err := r.Mean(w, func(s SadfSample) (float64, bool) {
		d, ok := s.Interface(iface)
		return field(d), ok
	})
	if err != nil {
		return 0, fmt.Errorf("interface %q: %w", iface, err)
	}
	return m, nil
}

// MeanCPUBusyPercent averages 100 - idle of cpu ("all", "0", ...) over the
// samples stamped inside w. It returns an error wrapping ErrNoSamples if no
// sample in w has that CPU.
func (r *SadfReport) MeanCPUBusyPercent(w Window, cpu string) (float64, error) {
	m, err := r.Mean(w, func(s SadfSample) (float64, bool) {
		for _, c := range s.CPUs {
			if c.CPU == cpu {
				return c.BusyPercent(), true
			}
		}
		return 0, false
	})
	if err != nil {
		return 0, fmt.Errorf("cpu %q: %w", cpu, err)
	}
	return m, nil
}
