package phase3

import (
	"testing"

	"csbench/internal/summary"
)

// Holds of several processes against the one end agreed for all: shared
// when the last to begin began before it and the first to end ended at
// or after it; each process that did not is named with why.
func TestCheckHold(t *testing.T) {
	const end = int64(1_796_168_456_399)
	proc := func(began, ended, agreed *int64, src string) *Client {
		return &Client{Source: sp(src), HoldBeganAtMs: began, HoldEndedAtMs: ended, HoldEndAgreedAtMs: agreed}
	}
	at := func(d int64) *int64 { return ip(end + d) }
	hosts := []string{"client1", "client2", "client2"}
	for _, tc := range []struct {
		name    string
		clients []*Client
		agreed  *int64
		shared  bool
		why     []string // of the missed processes, in order
		spanMs  int64    // ended_first - began_last
	}{
		{"held over the end", []*Client{proc(at(-3195), at(0), at(0), "a"), proc(at(-3194), at(4), at(0), "b"), proc(at(-2000), at(1), at(0), "c")},
			ip(end), true, nil, 2000},
		{"one ended early", []*Client{proc(at(-3195), at(0), at(0), "a"), proc(at(-3194), at(-500), at(0), "b"), proc(at(-2000), at(1), at(0), "c")},
			ip(end), false, []string{HoldEarly}, 1500},
		{"one began after the end", []*Client{proc(at(-3195), at(0), at(0), "a"), proc(at(1200), at(1201), at(0), "b"), proc(at(-2000), at(1), at(0), "c")},
			ip(end), false, []string{HoldLate}, -1200},
		{"one never held, one told another end", []*Client{proc(nil, nil, at(0), "a"), proc(at(-3000), at(10), at(10), "b"), proc(at(-2000), at(1), at(0), "c")},
			ip(end), false, []string{HoldNever, HoldOtherEnd}, 1},
		{"the processes' end when run.env has none", []*Client{proc(at(-3195), at(0), at(0), "a"), proc(at(-3194), at(-1), at(0), "b")},
			nil, false, []string{HoldEarly}, 3193},
	} {
		h := checkHold(tc.clients, hosts, tc.agreed)
		if h == nil {
			t.Fatalf("%s: no hold", tc.name)
		}
		if h.Shared != tc.shared || len(h.Missed) != len(tc.why) {
			t.Errorf("%s: shared %v, missed %+v", tc.name, h.Shared, h.Missed)
			continue
		}
		for i, w := range tc.why {
			if h.Missed[i].Why != w {
				t.Errorf("%s: missed[%d] %+v, want %s", tc.name, i, h.Missed[i], w)
			}
		}
		if h.AgreedEndMs == nil || *h.AgreedEndMs != end {
			t.Errorf("%s: agreed end %v", tc.name, h.AgreedEndMs)
		}
		if tc.name != "one never held, one told another end" {
			if got := *h.EndedFirstMs - *h.BeganLastMs; got != tc.spanMs {
				t.Errorf("%s: every process holding %d ms, want %d", tc.name, got, tc.spanMs)
			}
		}
	}
	early := checkHold([]*Client{proc(at(-3195), at(0), at(0), "a"), proc(at(-3194), at(-500), at(0), "b")}, hosts, ip(end))
	if x := early.Missed[0]; x.Process != 2 || x.Label != "process 2 (client2, b)" || *x.ByMs != 500 || missText(x) != "ended its hold 0.500 s before it" {
		t.Errorf("missed %+v: %q", x, missText(x))
	}
	// Without any end agreed (connclient -hold), the holds share an
	// instant when they overlap.
	if h := checkHold([]*Client{proc(at(0), at(3000), nil, "a"), proc(at(1000), at(4000), nil, "b")}, nil, nil); !h.Shared || h.AgreedBasis != HoldEndNone {
		t.Errorf("overlapping holds: %+v", h)
	}
	if h := checkHold([]*Client{proc(at(0), at(3000), nil, "a"), proc(at(3500), at(6000), nil, "b")}, nil, nil); h.Shared {
		t.Errorf("holds one after the other: %+v", h)
	}
	// Results written before connclient recorded its hold: nothing.
	if h := checkHold([]*Client{{}, {}}, nil, ip(end)); h != nil {
		t.Errorf("old results: %+v", h)
	}
}

// A summary read back from summary.json gives the same ramp and hold as
// the one Summarize made.
func TestDetailsReadBack(t *testing.T) {
	s, err := summary.Load("testdata/smoke-clients2.summary.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Cell("idle-2k")
	h, r := holdOf(c), rampOf(c)
	if h == nil || !h.Shared || h.Processes != 2 || h.AgreedEndMs == nil || *h.AgreedEndMs != 1796168456399 {
		t.Errorf("hold %+v", h)
	}
	if r == nil || r.Pace != "aimd" || r.ConnectRetriesMax != 3 || r.FirstAttemptBasis != BasisMerged {
		t.Errorf("ramp %+v", r)
	}
	if holdOf(s.Cell("lowrate-2k-500rps")) != nil || rampOf(s.Cell("active-2k-1k")) != nil {
		t.Error("a cell without a hold or a ramp has one")
	}
}
