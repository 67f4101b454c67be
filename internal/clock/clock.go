// Package clock estimates each host's clock offset against the controller
// from timed readings through ssh, and decides whether the offsets are
// within a bound: the numbers and the verdict that lib/preflight.sh acts
// on before a run hands its client hosts one start time.
//
// A sample is one reading: the controller's clock just before it asked
// (t0), the host's clock as the host printed it (remote), and the
// controller's clock when the answer came back (t1), all in microseconds.
// The host read its clock somewhere inside [t0, t1], so its offset is
// remote - (t0+t1)/2 give or take half the round trip. Of several samples
// of a host the one with the shortest round trip is kept.
package clock

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Sample is one timed reading of a host's clock, in microseconds.
type Sample struct {
	T0, Remote, T1 int64
}

// Host is the estimate for one host.
type Host struct {
	Label    string
	OffsetUS int64 // the host's clock minus the controller's
	RTTUS    int64 // the round trip of the sample the offset comes from
}

// ErrorUS is how far the true offset may lie from OffsetUS: half the trip.
func (h Host) ErrorUS() int64 { return h.RTTUS / 2 }

// Beyond reports whether the whole interval the offset may lie in is
// beyond ±boundUS: a slow ssh round trip widens the interval, and a host
// is refused only when even its most favourable reading is off.
func (h Host) Beyond(boundUS int64) bool {
	return h.OffsetUS-h.ErrorUS() > boundUS || h.OffsetUS+h.ErrorUS() < -boundUS
}

// Estimate keeps the sample with the shortest round trip.
func Estimate(label string, samples []Sample) (Host, error) {
	if len(samples) == 0 {
		return Host{}, fmt.Errorf("%s: no clock reading", label)
	}
	var best Host
	for i, s := range samples {
		rtt := s.T1 - s.T0
		if rtt < 0 {
			return Host{}, fmt.Errorf("%s: reading %d: t1 %d before t0 %d", label, i+1, s.T1, s.T0)
		}
		if i == 0 || rtt < best.RTTUS {
			best = Host{Label: label, OffsetUS: s.Remote - (s.T0+s.T1)/2, RTTUS: rtt}
		}
	}
	return best, nil
}

// Read parses "LABEL T0_US REMOTE_US T1_US" lines and estimates every
// host, in the order the labels first appear.
func Read(r io.Reader) ([]Host, error) {
	var order []string
	by := map[string][]Sample{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("line %d: %q: want LABEL T0_US REMOTE_US T1_US", n, sc.Text())
		}
		var v [3]int64
		for i := range v {
			x, err := strconv.ParseInt(f[i+1], 10, 64)
			if err != nil || x <= 0 {
				return nil, fmt.Errorf("line %d: %q is not a positive count of microseconds", n, f[i+1])
			}
			v[i] = x
		}
		if _, ok := by[f[0]]; !ok {
			order = append(order, f[0])
		}
		by[f[0]] = append(by[f[0]], Sample{T0: v[0], Remote: v[1], T1: v[2]})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	hosts := make([]Host, 0, len(order))
	for _, l := range order {
		h, err := Estimate(l, by[l])
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// MS formats microseconds as milliseconds with three decimals.
func MS(us int64) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	return fmt.Sprintf("%s%d.%03d", sign, us/1000, us%1000)
}

// Start lead: how far ahead of now the controller sets the one due time of
// a cell's tools (`csb start-at`), so that every host has started its
// process before it. Launching on this host takes milliseconds; on a host
// over ssh, a round trip or two of a loaded controller's ssh.
const (
	// LeadBaseMs is the lead with every host local.
	LeadBaseMs = 300
	// LeadPerRemoteMinMs is the least added per host reached over ssh;
	// twice its measured round trip when that is more.
	LeadPerRemoteMinMs = 250
	// LeadPerProcMs is added per process the busiest host of a cell starts:
	// each is one `setsid csb start-at` in that host's one script (51
	// connclient processes at C1M took about 1.9 s on a loaded host).
	LeadPerProcMs = 60
)

// StartLeadMs is the lead for hosts reached over ssh with these round
// trips (microseconds; none: every host is this one).
func StartLeadMs(rttsUS []int64) int64 {
	lead := int64(LeadBaseMs)
	for _, rtt := range rttsUS {
		lead += max(LeadPerRemoteMinMs, 2*rtt/1000)
	}
	return lead
}
