package c10kplan

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Read reads a plan document and checks its schema version.
func Read(path string) (*Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var head struct {
		SchemaVersion int    `json:"schema_version"`
		Document      string `json:"document"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: not a plan document: %w", path, err)
	}
	if head.Document != "c10k-plan" {
		return nil, fmt.Errorf("%s: not a plan document (document %q, want \"c10k-plan\")", path, head.Document)
	}
	if head.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: plan schema_version %d, this csb reads version %d: summarize it with the csb of the commit that made it", path, head.SchemaVersion, SchemaVersion)
	}
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &p, nil
}

// Write writes the plan document by temp-and-rename.
func Write(path string, p *Plan) error {
	b, err := MarshalIndent(p)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".plan-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// RampBoundS is how long a scenario's ramp may take (every process's
// -ramp-max) and how long the runner waits for every connection of it to
// be open: RampFactor times the ramp at the planned connect rate, and
// RampSlackS more.
func (p *Plan) RampBoundS() int64 {
	r := max(p.Scenario.ConnectRate, 1)
	return RampFactor*p.Scenario.Conns/r + RampSlackS
}

// Code is the first refusal's code, or "".
func (p *Plan) Code() string {
	if len(p.Refusals) == 0 {
		return ""
	}
	return p.Refusals[0].Code
}

// Refusal joins the refusals' sentences for people.
func (p *Plan) Refusal() string {
	var s []string
	for _, r := range p.Refusals {
		s = append(s, r.Message)
	}
	return strings.Join(s, "; ")
}

// Note joins the notes for people.
func (p *Plan) Note() string { return strings.Join(p.Notes, "; ") }

// Limits is a sentence for the run's log: the facts the plan read.
func (p *Plan) Limits() string {
	s, c := &p.Facts.Server, &p.Facts.Client
	return fmt.Sprintf("server fd hard %s, somaxconn %s, tcp_max_syn_backlog %s; client fd hard %s, ports %s-%s (%s), tcp_tw_reuse %s",
		s.FDHard, s.Somaxconn, s.SynBacklog, c.FDHard, c.PortLo, c.PortHi, c.Ports(), c.TWReuse)
}

// WriteKV renders what the runner needs as KEY=VALUE lines, one value per
// line with no newline inside; lists are comma-separated.
func (p *Plan) WriteKV(w io.Writer) error {
	var ips, add, conns, rate, rps, hosts, threads []string
	for _, s := range p.Sources {
		ips = append(ips, s.IP)
		hosts = append(hosts, s.Host)
		if s.Add {
			add = append(add, s.IP)
		}
		conns = append(conns, strconv.FormatInt(s.Connections, 10))
		rate = append(rate, strconv.FormatInt(s.ConnectRate, 10))
		rps = append(rps, strconv.FormatInt(s.RPS, 10))
		threads = append(threads, strconv.Itoa(s.Threads))
	}
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	line := func(s string) string { return strings.ReplaceAll(s, "\n", " ") }
	_, err := fmt.Fprintf(w, "ok=%s\ncode=%s\nrefusal=%s\nretry_after_time_wait=%s\nserver_procs=%d\nclient_procs=%d\nsources=%s\nadd=%s\nshare_conns=%s\nshare_rate=%s\nshare_rps=%s\nshare_threads=%s\nsource_hosts=%s\nconnections=%d\nramp_bound_s=%d\nconnect_timeout_s=%d\nnote=%s\nlimits=%s\nexit=%d\nmem_basis=%s\nport_range_wanted=%s\n",
		b(p.OK), p.Code(), line(p.Refusal()), b(p.RetryAfterTimeWait), p.ServerProcs, len(p.Sources),
		strings.Join(ips, ","), strings.Join(add, ","), strings.Join(conns, ","), strings.Join(rate, ","), strings.Join(rps, ","),
		strings.Join(threads, ","), strings.Join(hosts, ","), p.Scenario.Conns, p.RampBoundS(), ConnectTimeoutS, line(p.Note()), line(p.Limits()), p.ExitCode(), line(p.MemBasis), p.PortRangeWanted)
	return err
}
