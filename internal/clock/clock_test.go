package clock

import (
	"strings"
	"testing"
)

func TestEstimateKeepsTheShortestTrip(t *testing.T) {
	h, err := Estimate("client2", []Sample{
		{T0: 1_000_000, Remote: 1_300_000, T1: 1_400_000}, // trip 400 ms
		{T0: 2_000_000, Remote: 2_005_500, T1: 2_001_000}, // trip 1 ms: offset +5 ms
		{T0: 3_000_000, Remote: 2_900_000, T1: 3_200_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	if h.OffsetUS != 5000 || h.RTTUS != 1000 || h.ErrorUS() != 500 {
		t.Errorf("got %+v", h)
	}
}

func TestBeyondOnlyWhenTheWholeIntervalIs(t *testing.T) {
	const bound = 100_000
	for _, c := range []struct {
		off, rtt int64
		want     bool
	}{
		{0, 1000, false},
		{150_000, 1000, true},
		{-150_000, 1000, true},
		{150_000, 120_000, false}, // 150 ± 60 ms may be 90 ms: not refused
		{100_000, 0, false},       // at the bound is within it
	} {
		if got := (Host{OffsetUS: c.off, RTTUS: c.rtt}).Beyond(bound); got != c.want {
			t.Errorf("offset %d rtt %d: Beyond = %v, want %v", c.off, c.rtt, got, c.want)
		}
	}
}

func TestReadOrderAndErrors(t *testing.T) {
	hs, err := Read(strings.NewReader("server 10 12 14\nclient2 10 9 12\nserver 20 21 21\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Label != "server" || hs[0].OffsetUS != 1 || hs[0].RTTUS != 1 || hs[1].OffsetUS != -2 {
		t.Errorf("got %+v", hs)
	}
	for _, bad := range []string{"server 1 2\n", "server 1 x 3\n", "server 5 5 4\n", "server 0 1 2\n"} {
		if _, err := Read(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if MS(-1234567) != "-1234.567" || MS(5) != "0.005" {
		t.Errorf("MS: %s %s", MS(-1234567), MS(5))
	}
}
