package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"csbench/internal/clock"
)

const clockUsage = `Usage: csb clock -bound-ms N [-same-clock] [-name LABEL=TEXT]... [-test-offset LABEL=MS,...] <SAMPLES

Reads timed readings of each host's clock, one per line on stdin:
  LABEL T0_US REMOTE_US T1_US
(the controller's clock before asking, the host's answer, the controller's
clock after; Unix microseconds), keeps each host's reading with the shortest
round trip, and prints KEY=VALUE lines for the runner:
  <label>.offset_ms  <label>.error_ms  <label>.rtt_us   (per host, in order)
  max_rtt_us  lead_ms  ok=1|0  and, when ok=0: code=clock_skew refused=<label> refusal=<sentence>
-same-clock says every host reads this host's clock (the netns lab: one
kernel): each offset is then 0 and its error 0, whatever the readings'
round trips made of them (a loaded ssh makes a shared clock look off by
tens of ms); the round trips still give lead_ms.
lead_ms is how far ahead the runner sets a cell's one due time (csb
start-at): a base for this host and, per host read here (each one reached
over ssh), twice its round trip, at least 250 ms. No input (every host is
this one) gives the base alone.
A host is refused when its offset is beyond -bound-ms even at the favourable
end of its reading (offset ± half the round trip). -name gives the text a
refusal names a host by. -test-offset adds milliseconds to a host's offset:
for tests only, since a network namespace cannot have a clock of its own.

Exit status: 0 an answer (ok=1 or ok=0), 2 bad usage or malformed input.
`

func runClock(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("clock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var bound int64 = -1
	names := map[string]string{}
	test := map[string]int64{}
	fs.Int64Var(&bound, "bound-ms", -1, "")
	same := fs.Bool("same-clock", false, "")
	fs.Func("name", "", func(v string) error {
		l, t, ok := strings.Cut(v, "=")
		if !ok || l == "" || t == "" {
			return fmt.Errorf("-name %q: want LABEL=TEXT", v)
		}
		names[l] = t
		return nil
	})
	fs.Func("test-offset", "", func(v string) error {
		for _, e := range strings.Split(v, ",") {
			if e == "" {
				continue
			}
			l, ms, ok := strings.Cut(e, "=")
			n, err := strconv.ParseInt(ms, 10, 64)
			if !ok || l == "" || err != nil {
				return fmt.Errorf("-test-offset %q: want LABEL=MS,...", v)
			}
			test[l] = n
		}
		return nil
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, clockUsage)
			return nil
		}
		return fmt.Errorf("%w: %s", errUsage, err.Error())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf("clock: unexpected argument %q", fs.Arg(0)))
	}
	if bound < 0 {
		return fmt.Errorf("%w: %s", errUsage, "clock: -bound-ms N is required (the largest offset a host may have, in ms)")
	}
	hosts, err := clock.Read(stdin)
	if err != nil {
		return fmt.Errorf("%w: %s", errUsage, "clock: "+err.Error())
	}
	var b strings.Builder
	var maxRTT int64
	var rtts []int64
	var refused *clock.Host
	for i := range hosts {
		h := &hosts[i]
		if *same {
			h.OffsetUS = 0
		}
		h.OffsetUS += test[h.Label] * 1000
		errUS := h.ErrorUS()
		if *same {
			errUS = 0
		}
		fmt.Fprintf(&b, "%s.offset_ms=%s\n%s.error_ms=%s\n%s.rtt_us=%d\n", h.Label, clock.MS(h.OffsetUS),
			h.Label, clock.MS(errUS), h.Label, h.RTTUS)
		maxRTT = max(maxRTT, h.RTTUS)
		rtts = append(rtts, h.RTTUS)
		if refused == nil && ((*same && abs(h.OffsetUS) > bound*1000) || (!*same && h.Beyond(bound*1000))) {
			refused = h
		}
	}
	fmt.Fprintf(&b, "max_rtt_us=%d\nlead_ms=%d\n", maxRTT, clock.StartLeadMs(rtts))
	if refused == nil {
		b.WriteString("ok=1\n")
	} else {
		name := names[refused.Label]
		if name == "" {
			name = refused.Label
		}
		fmt.Fprintf(&b, "ok=0\ncode=clock_skew\nrefused=%s\nrefusal=the clock of %s is off by %s ms (+- %s ms, measured through ssh) against this host's: more than CLOCK_BOUND_MS=%d; sync the clocks (chrony, ntp) and run again\n",
			refused.Label, name, clock.MS(refused.OffsetUS), clock.MS(refused.ErrorUS()), bound)
	}
	_, err = io.WriteString(stdout, b.String())
	return err
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
