package summary

import (
	"math"
	"regexp"
	"strconv"

	"csbench/internal/decimal"
)

var rateRE = regexp.MustCompile(`^([0-9]+)(k|m|g)?bit$`)

// RateMbps parses a tc rate ("1gbit", "100mbit") into Mbit/s; NaN for "none"
// or anything else.
func RateMbps(rate string) float64 {
	m := rateRE.FindStringSubmatch(rate)
	if m == nil {
		return math.NaN()
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	switch m[2] {
	case "":
		return v / 1e6
	case "k":
		return v / 1e3
	case "m":
		return v
	default:
		return v * 1e3
	}
}

// TCP payload per full-size segment at MTU 1500 with timestamps:
// 1500 - 20 (IP) - 20 (TCP) - 12 (timestamp option) = 1448 bytes.
const TCPPayloadBytes = 1448.0

// LinkFor states what a run's throughput is compared against.
//
// On real Ethernet a 1500-byte packet costs 1538 bytes of wire time (14
// header, 4 FCS, 8 preamble, 12 inter-frame gap), so TCP can carry at most
// rate x 1448/1538: 941.5 Mbit/s on 1 GbE, the figure iperf3 shows on a
// healthy link. The netns lab's tbf counts the 1514-byte frame only, so its
// ceiling is rate x 1448/1514 (956.4 Mbit/s at 1gbit). Loopback has no link.
func LinkFor(rate, lab string) Link {
	l := Link{Rate: rate, RateMbps: F(RateMbps(rate))}
	switch {
	case lab == "local":
		l.CeilingBasis = "loopback: no link, no ceiling; figures measure CPU and memory only"
		l.RateMbps = nil
	case l.RateMbps == nil:
		l.CeilingBasis = "unshaped link (LINK_RATE=none): no ceiling"
	case lab == "netns":
		l.TCPCeilingMbps = F(decimal.Round(*l.RateMbps*TCPPayloadBytes/1514, 1))
		l.CeilingBasis = "tbf at " + rate + " counts 1514-byte frames: rate x 1448/1514 (TCP payload per frame, MTU 1500, timestamps on)"
	default:
		l.TCPCeilingMbps = F(decimal.Round(*l.RateMbps*TCPPayloadBytes/1538, 1))
		l.CeilingBasis = "Ethernet at " + rate + ": rate x 1448/1538 (payload per 1538 bytes of wire time: MTU 1500 + header, FCS, preamble, gap; TCP timestamps on)"
	}
	return l
}
