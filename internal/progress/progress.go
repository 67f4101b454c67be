// Package progress estimates how long a phase or the demo has left: from
// the planned length of each step (a cell, or a phase) and how far the
// steps already run overran their plan.
package progress

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"csbench/internal/rundir"
)

// Estimate is where step k of a plan stands.
type Estimate struct {
	K, N int
	In   time.Duration // since the phase (or demo) began
	// Left is the time the steps from k on are expected to take; Unknown
	// counts those of them whose plan is unknown (< 0), not in Left.
	Left    time.Duration
	Unknown int
}

// At estimates step k (1-based) of plan (planned seconds per step, < 0
// unknown), in seconds since the work began, first the seconds in when
// step 1 began (the setup before it is not a step's overrun). The steps
// left take their plan times how far the steps run so far took longer than
// theirs (never less than their plan). A step past the plan's end counts
// as one more of the plan's.
func At(k int, in, first float64, plan []float64) Estimate {
	e := Estimate{K: k, N: len(plan), In: secs(in)}
	if k > e.N {
		e.N = k
	}
	done, rest := 0.0, 0.0
	for i, p := range plan {
		if p < 0 {
			if i >= k-1 {
				e.Unknown++
			}
			continue
		}
		if i < k-1 {
			done += p
		} else {
			rest += p
		}
	}
	factor := 1.0
	if took := in - first; done > 0 && took > done {
		factor = took / done
	}
	e.Left = secs(rest * factor)
	return e
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)).Round(time.Second) }

// Line is the estimate as the log reads it: "WHAT k/n NAME; 1m05s in,
// about 2m10s left".
func (e Estimate) Line(what, name string) string {
	left := "about " + Dur(e.Left) + " left"
	if e.Unknown > 0 {
		left = fmt.Sprintf("at least %s left (%d with no plan)", Dur(e.Left), e.Unknown)
	}
	return fmt.Sprintf("%s %d/%d %s; %s in, %s", what, e.K, e.N, name, Dur(e.In), left)
}

// Dur is a duration as "45s", "3m05s" or "1h02m".
func Dur(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
}

// Took is how long the newest finished ok run of runner (its path as
// run.env records it, "03-c10k/run_c10k.sh") took, among the run
// directories under dirs with the same lab and profile, else with the same
// profile on another lab: the time, the directory, its lab, and the REPEAT
// its cells were scaled from (0: none), or false when there is none. With
// repeat > 0 a run made with another REPEAT counts its cells' span times
// repeat/REPEAT, its setup and end as they were.
func Took(dirs []string, runner, lab, profile string, repeat int) (time.Duration, string, string, int, bool) {
	var runs []string
	for _, d := range dirs {
		ds, err := rundir.Files(d, "", "")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		runs = append(runs, ds...)
	}
	// Newest first: a run directory's name begins with its start time.
	sort.Slice(runs, func(i, j int) bool { return filepath.Base(runs[i]) > filepath.Base(runs[j]) })
	var other *rundir.Run
	for _, d := range runs {
		r, err := rundir.Read(d)
		if err != nil || r.Get("runner") != runner || r.Get("status") != "ok" || r.Settings["PROFILE"] != profile {
			continue
		}
		if r.Get("lab") == lab {
			if t, from, ok := took(r, repeat); ok {
				return t, d, lab, from, true
			}
		} else if other == nil {
			other = r
		}
	}
	if other != nil {
		if t, from, ok := took(other, repeat); ok {
			return t, other.Dir, other.Get("lab"), from, true
		}
	}
	return 0, "", "", 0, false
}

// took is how long run r took, its cells scaled to repeat (see Took).
func took(r *rundir.Run, repeat int) (time.Duration, int, bool) {
	a, errA := time.Parse(time.RFC3339, r.Get("started_at"))
	b, errB := time.Parse(time.RFC3339, r.Get("finished_at"))
	if errA != nil || errB != nil || b.Before(a) {
		return 0, 0, false
	}
	t, from := b.Sub(a), 0
	if R, err := strconv.Atoi(r.Settings["REPEAT"]); err == nil && R > 0 && repeat > 0 && R != repeat && len(r.Cells) > 0 {
		span := r.Cells[len(r.Cells)-1].End.Sub(r.Cells[0].Start)
		if span > 0 && span < t {
			t += time.Duration(float64(span) * (float64(repeat)/float64(R) - 1))
			from = R
		}
	}
	return t, from, true
}
