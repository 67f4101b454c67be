package parse

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// MpstatReport is what `mpstat -P ALL -o JSON INTERVAL` printed.
//
// The runner must start mpstat with LC_ALL=C S_TIME_FORMAT=ISO TZ=UTC in its
// environment: mpstat's JSON carries the date once, in the header, and each
// sample's time of day without a zone, both in the zone of its environment;
// without S_TIME_FORMAT=ISO the date has a two-digit year (ParseMpstat rejects
// it). Stop mpstat with SIGINT: it closes its JSON and exits 0. SIGTERM kills
// it mid-document (exit 143); ParseMpstat still returns every sample written
// whole and sets Truncated.
type MpstatReport struct {
	Nodename string
	NumCPUs  int
	Samples  []MpstatSample
	// Truncated is true when the document ended before mpstat closed it (it
	// was stopped by SIGTERM or SIGKILL, or the file was cut). Samples then
	// holds every sample that was complete.
	Truncated bool
}

// MpstatSample is one interval of mpstat: the "all" line and one line per CPU.
type MpstatSample struct {
	// Time is the end of the interval, in UTC, to the second. It is the
	// header date plus the sample's time of day; a time of day earlier than
	// the previous sample's moves to the next day (a run across midnight).
	Time time.Time
	CPUs []MpstatCPU // in mpstat's order: "all" first, then "0", "1", ...
}

// MpstatCPU is one CPU's line in a sample. Every field is a percentage of
// that CPU's time (of all CPUs' time for "all") over the interval.
type MpstatCPU struct {
	CPU           string // "all", "0", "1", ...
	UsrPercent    float64
	NicePercent   float64
	SysPercent    float64
	IowaitPercent float64
	IRQPercent    float64
	SoftPercent   float64
	StealPercent  float64
	GuestPercent  float64
	GnicePercent  float64
	IdlePercent   float64
}

// BusyPercent is 100 - idle: every state but idle counts as busy, iowait
// included.
func (c MpstatCPU) BusyPercent() float64 { return 100 - c.IdlePercent }

// CPU returns the line for cpu ("all", "0", ...) in s, if there is one.
func (s MpstatSample) CPU(cpu string) (MpstatCPU, bool) {
	for _, c := range s.CPUs {
		if c.CPU == cpu {
			return c, true
		}
	}
	return MpstatCPU{}, false
}

// ParseMpstat reads the output of `mpstat -P ALL -o JSON INTERVAL`, complete
// or cut short (see MpstatReport.Truncated). It fails on an empty input, on a
// header date that is not ISO 8601 (S_TIME_FORMAT=ISO was not set) and on a
// sample missing any of the fields that mpstat 12.6 prints.
func ParseMpstat(r io.Reader) (*MpstatReport, error) {
	doc, err := readSysstat(r)
	if err != nil {
		return nil, fmt.Errorf("mpstat: %w", err)
	}
	rep := &MpstatReport{Truncated: doc.truncated}
	if rep.Nodename, err = doc.headerString("nodename"); err != nil {
		return nil, fmt.Errorf("mpstat: %w", err)
	}
	if rep.NumCPUs, err = doc.headerInt("number-of-cpus"); err != nil {
		return nil, fmt.Errorf("mpstat: %w", err)
	}
	date, err := doc.headerString("date")
	if err != nil {
		return nil, fmt.Errorf("mpstat: %w", err)
	}
	if len(doc.stats) == 0 {
		return rep, nil
	}
	day, err := time.ParseInLocation("2006-01-02", date, time.UTC)
	if err != nil {
		return nil, fmt.Errorf("mpstat: header date %q is not YYYY-MM-DD: run mpstat with S_TIME_FORMAT=ISO (and TZ=UTC)", date)
	}
	var prev time.Time
	for i, raw := range doc.stats {
		s, err := parseMpstatSample(raw, day, prev)
		if err != nil {
			return nil, fmt.Errorf("mpstat: sample %d: %w", i+1, err)
		}
		rep.Samples = append(rep.Samples, s)
		prev = s.Time
	}
	return rep, nil
}

func parseMpstatSample(raw json.RawMessage, day, prev time.Time) (MpstatSample, error) {
	var in struct {
		Timestamp string                       `json:"timestamp"`
		CPULoad   []map[string]json.RawMessage `json:"cpu-load"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return MpstatSample{}, err
	}
	t, err := clockOn(day, in.Timestamp, prev)
	if err != nil {
		return MpstatSample{}, err
	}
	s := MpstatSample{Time: t}
	if len(in.CPULoad) == 0 {
		return s, fmt.Errorf("%s: no cpu-load", in.Timestamp)
	}
	for _, obj := range in.CPULoad {
		var c MpstatCPU
		if err := json.Unmarshal(obj["cpu"], &c.CPU); err != nil {
			return s, fmt.Errorf("%s: cpu name: %w", in.Timestamp, err)
		}
		err := requireFloats(obj, map[string]*float64{
			"usr": &c.UsrPercent, "nice": &c.NicePercent, "sys": &c.SysPercent,
			"iowait": &c.IowaitPercent, "irq": &c.IRQPercent, "soft": &c.SoftPercent,
			"steal": &c.StealPercent, "guest": &c.GuestPercent, "gnice": &c.GnicePercent,
			"idle": &c.IdlePercent,
		})
		if err != nil {
			return s, fmt.Errorf("%s: cpu %q: %w", in.Timestamp, c.CPU, err)
		}
		s.CPUs = append(s.CPUs, c)
	}
	return s, nil
}

// clockOn places the time of day hh:mm:ss on day (UTC), moving it one day on
// for every day it would otherwise fall before prev.
func clockOn(day time.Time, clock string, prev time.Time) (time.Time, error) {
	c, err := time.Parse("15:04:05", clock)
	if err != nil {
		return time.Time{}, fmt.Errorf("time of day %q is not HH:MM:SS (was S_TIME_FORMAT=ISO set?)", clock)
	}
	t := time.Date(day.Year(), day.Month(), day.Day(), c.Hour(), c.Minute(), c.Second(), 0, time.UTC)
	for !prev.IsZero() && t.Before(prev) {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

// MeanBusyPercent returns the mean of 100 - idle over the samples of cpu
// ("all" for the whole machine, "0", "1", ... for one CPU) stamped inside w.
// It returns an error wrapping ErrNoSamples if there is none.
func (r *MpstatReport) MeanBusyPercent(w Window, cpu string) (float64, error) {
	var xs []float64
	for _, s := range r.Samples {
		if !w.Contains(s.Time) {
			continue
		}
		if c, ok := s.CPU(cpu); ok {
			xs = append(xs, c.BusyPercent())
		}
	}
	return meanOf(xs, fmt.Sprintf("mpstat cpu %q in %v", cpu, w))
}

// MeanBusyPercentPerCPU returns MeanBusyPercent for every CPU name ("all"
// included) that has a sample inside w. It returns an error wrapping
// ErrNoSamples if no sample lies inside w.
func (r *MpstatReport) MeanBusyPercentPerCPU(w Window) (map[string]float64, error) {
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, s := range r.Samples {
		if !w.Contains(s.Time) {
			continue
		}
		for _, c := range s.CPUs {
			sums[c.CPU] += c.BusyPercent()
			counts[c.CPU]++
		}
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("mpstat in %v: %w", w, ErrNoSamples)
	}
	for k := range sums {
		sums[k] /= float64(counts[k])
	}
	return sums, nil
}
