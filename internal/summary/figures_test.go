package summary

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type hostFig struct {
	CPUPct *float64 `json:"cpu_pct"`
	MaxPct *float64 `json:"cpu_max_core_pct"`
	Peak   *float64 `json:"cpu_peak_pct,omitempty"`
}

type baseFig struct {
	RateMbps *float64 `json:"rate_mbps"`
}

type testFig struct {
	baseFig
	Retrans *float64           `json:"retransmits"`
	Own     *float64           `json:"own_mbps,omitempty"`
	Hosts   map[string]hostFig `figures:"prefixed"`
	Note    string             `json:"-"`
}

func fp(v float64) *float64 { return &v }

func mapJSON(t *testing.T, m map[string]*float64) string {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFiguresRoundTrip(t *testing.T) {
	in := testFig{
		baseFig: baseFig{RateMbps: fp(941.5)},
		Own:     fp(12),
		Hosts: map[string]hostFig{
			"server":  {CPUPct: fp(3.5), MaxPct: fp(40)},
			"client2": {CPUPct: fp(0), Peak: fp(99.9)},
		},
	}
	m := map[string]*float64{}
	PutFigures(m, in)
	want := `{"client2_cpu_max_core_pct":null,"client2_cpu_pct":0,"client2_cpu_peak_pct":99.9,"own_mbps":12,"rate_mbps":941.5,"retransmits":null,"server_cpu_max_core_pct":40,"server_cpu_pct":3.5}`
	if got := mapJSON(t, m); got != want {
		t.Fatalf("put:\n got %s\nwant %s", got, want)
	}
	var out testFig
	Figures(m, &out)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
	// What was read is a copy: changing it leaves the map alone.
	*out.RateMbps = 1
	if *m["rate_mbps"] != 941.5 {
		t.Fatal("Figures shares its pointers with the map")
	}
	// A pointer to the struct puts the same.
	m2 := map[string]*float64{}
	PutFigures(m2, &in)
	if mapJSON(t, m2) != want {
		t.Fatalf("put through a pointer: %s", mapJSON(t, m2))
	}
}

// omitempty: a nil figure is left out; without it, written as null.
func TestFiguresOmitEmptyAndNull(t *testing.T) {
	m := map[string]*float64{}
	PutFigures(m, testFig{})
	if got, want := mapJSON(t, m), `{"rate_mbps":null,"retransmits":null}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	var out testFig
	Figures(m, &out)
	if !reflect.DeepEqual(out, testFig{}) {
		t.Fatalf("%+v", out)
	}
}

// Keys the struct does not name are left alone by PutFigures and ignored
// by Figures; a figure the struct names overwrites its key.
func TestFiguresUnknownKeysLeftAlone(t *testing.T) {
	m := map[string]*float64{"latency_p99_ms": fp(2), "rate_mbps": fp(5), "server_proc_cpu_pct": fp(7)}
	PutFigures(m, testFig{Retrans: fp(3)})
	if got, want := mapJSON(t, m), `{"latency_p99_ms":2,"rate_mbps":null,"retransmits":3,"server_proc_cpu_pct":7}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	var out testFig
	Figures(map[string]*float64{"latency_p99_ms": fp(2), "retransmits": fp(3)}, &out)
	if out.Retrans == nil || *out.Retrans != 3 || out.RateMbps != nil || out.Hosts != nil {
		t.Fatalf("%+v", out)
	}
}

// A prefixed map reads back only the names that carry every figure that
// is not omitempty, and only one-word names.
func TestFiguresPrefixedNames(t *testing.T) {
	m := map[string]*float64{
		"server_cpu_pct": fp(1), "server_cpu_max_core_pct": nil, // complete, with a null
		"client_cpu_pct":        fp(2),                                          // incomplete: no client_cpu_max_core_pct
		"iperf3_client_cpu_pct": fp(3), "iperf3_client_cpu_max_core_pct": fp(4), // not one word
		"loadgen_cpu_peak_pct": fp(5), // only an omitempty figure
	}
	hosts := map[string]hostFig{}
	Figures(m, &hosts)
	if len(hosts) != 1 || *hosts["server"].CPUPct != 1 || hosts["server"].MaxPct != nil {
		t.Fatalf("%+v", hosts)
	}
	// A map on its own is written prefixed too.
	m2 := map[string]*float64{}
	PutFigures(m2, hosts)
	if got, want := mapJSON(t, m2), `{"server_cpu_max_core_pct":null,"server_cpu_pct":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func mustPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Fatalf("no panic, want one saying %q", want)
		}
		if msg := r.(string); !strings.Contains(msg, want) {
			t.Fatalf("panic %q, want it to say %q", msg, want)
		}
	}()
	f()
}

// A struct that is not all figures is refused on first use, naming the
// field: a float64 would write 0 for a figure not measured.
func TestFiguresRefusesOtherFields(t *testing.T) {
	type plain struct {
		RPS float64 `json:"rps"`
	}
	type noName struct {
		RPS *float64 `json:",omitempty"`
	}
	type twice struct {
		baseFig
		Rate *float64 `json:"rate_mbps"`
	}
	type badMap struct {
		Hosts map[string]float64 `figures:"prefixed"`
	}
	m := map[string]*float64{}
	mustPanic(t, "plain.RPS (float64", func() { PutFigures(m, plain{}) })
	mustPanic(t, "noName.RPS", func() { Figures(m, &noName{}) })
	mustPanic(t, `two fields are named "rate_mbps"`, func() { PutFigures(m, twice{}) })
	mustPanic(t, "badMap.Hosts", func() { PutFigures(m, badMap{}) })
	mustPanic(t, "float64 is not a figures struct", func() { PutFigures(m, 3.0) })
	mustPanic(t, "*summary.testFig is not a figures struct", func() { PutFigures(m, (*testFig)(nil)) })
	mustPanic(t, "not a non-nil pointer", func() { Figures(m, testFig{}) })
	mustPanic(t, `"client_1" is not one word`, func() {
		PutFigures(m, testFig{Hosts: map[string]hostFig{"client_1": {}}})
	})
	if len(m) != 0 {
		t.Fatalf("a refused struct wrote %v", m)
	}
}

func TestFigureNamesAndPutPrefixed(t *testing.T) {
	if got := strings.Join(FigureNames(testFig{}), " "); got != "rate_mbps retransmits own_mbps" {
		t.Fatalf("names %q", got)
	}
	m := map[string]*float64{}
	PutPrefixed(m, "client1", hostFig{CPUPct: fp(5)})
	if got, want := mapJSON(t, m), `{"client1_cpu_max_core_pct":null,"client1_cpu_pct":5}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	mustPanic(t, "holds prefixed maps", func() { PutPrefixed(m, "x", testFig{}) })
	mustPanic(t, "not one word", func() { PutPrefixed(m, "", hostFig{}) })
}

type ClientsFig struct {
	OwnRunsMbps *float64 `json:"own_runs_mbps"`
	SpreadMs    *float64 `json:"spread_ms,omitempty"`
}

type groupFig struct {
	Rate *float64 `json:"rate_mbps"`
	*ClientsFig
}

// An embedded *S: nil writes none of its keys; set, each by its tag (a
// null where not omitempty); read back when any of its keys is there.
func TestFiguresGroup(t *testing.T) {
	m := map[string]*float64{}
	PutFigures(m, groupFig{})
	if got, want := mapJSON(t, m), `{"rate_mbps":null}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	var out groupFig
	Figures(m, &out)
	if out.ClientsFig != nil {
		t.Fatalf("%+v", out)
	}
	in := groupFig{Rate: fp(1), ClientsFig: &ClientsFig{}}
	PutFigures(m, in)
	if got, want := mapJSON(t, m), `{"own_runs_mbps":null,"rate_mbps":1}`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	Figures(m, &out)
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("got %+v, want %+v", out, in)
	}
	if got := strings.Join(FigureNames(groupFig{}), " "); got != "rate_mbps own_runs_mbps spread_ms" {
		t.Fatalf("names %q", got)
	}
}

func TestFieldWise(t *testing.T) {
	type pair struct {
		A *float64 `json:"a"`
		B *float64 `json:"b"`
	}
	one, two := 1.0, 2.0
	got := FieldWise([]pair{{&one, &two}, {&two, nil}}, func(vs []*float64) *float64 {
		t := 0.0
		for _, v := range vs {
			if v == nil {
				return nil
			}
			t += *v
		}
		return &t
	})
	if got.A == nil || *got.A != 3 || got.B != nil {
		t.Fatalf("FieldWise: a %v b %v, want 3 and nil", got.A, got.B)
	}
}
