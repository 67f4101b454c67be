package compare

import (
	"reflect"
	"testing"
)

func TestPairMux(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h1, h2 []string
		want   []MuxPair
	}{
		{"phase 1, one run over both", []string{"1k", "1k-h2", "10k", "10k-h2", "1m"}, []string{"1k", "1k-h2", "10k", "10k-h2", "1m"},
			[]MuxPair{{"1k", "1k-h2", 0, 1}, {"10k", "10k-h2", 0, 1}}},
		{"phase 2, c×m = c", []string{"1k-c16", "1k-c64", "10k-c64"}, []string{"1k-c16-m1", "1k-c16-m4", "1k-c64-m1", "1k-c4-m4", "10k-c1-m64", "100k-c64-m1"},
			[]MuxPair{{"1k-c16", "1k-c16-m1", 16, 1}, {"1k-c16", "1k-c4-m4", 4, 4}, {"1k-c64", "1k-c16-m4", 16, 4}, {"1k-c64", "1k-c64-m1", 64, 1}, {"10k-c64", "10k-c1-m64", 1, 64}}},
		{"phase 2, no c×m matches", []string{"1k-c10"}, []string{"1k-c3-m3", "1k-c10-m10"}, nil},
		{"phase 3", []string{"idle-10k", "active-10k-1k", "active-1m-10k", "lowrate-10k-1000rps"},
			[]string{"idle-10k-h2", "active-10k-1k-h2-m100", "active-10k-1k-h2", "active-1m-10k-h2-m10", "lowrate-10k-1000rps-h2", "idle-20k-h2"},
			[]MuxPair{{"idle-10k", "idle-10k-h2", 10000, 1}, {"active-10k-1k", "active-10k-1k-h2-m100", 100, 100}, {"active-10k-1k", "active-10k-1k-h2", 10000, 1},
				{"active-1m-10k", "active-1m-10k-h2-m10", 100000, 10}, {"lowrate-10k-1000rps", "lowrate-10k-1000rps-h2", 10000, 1}}},
		// n/S not whole: the pair stands, its connections are not named.
		{"phase 3, streams do not divide", []string{"active-10k-1k"}, []string{"active-10k-1k-h2-m3"}, []MuxPair{{"active-10k-1k", "active-10k-1k-h2-m3", 0, 3}}},
		{"an HTTP/2 name is never an HTTP/1.1 partner", []string{"1k-h2", "1k-c4-m4"}, []string{"1k-h2", "1k-c4-m4"}, nil},
		{"zero streams or connections is no HTTP/2 cell", []string{"1k-c0", "1k"}, []string{"1k-c0-m4", "1k-c4-m0", "1k-h2-m0"}, nil},
		{"nothing over HTTP/2", []string{"1k", "10k"}, []string{"1k", "10k"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PairMux(tc.h1, tc.h2); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("PairMux(%q, %q)\n got %v\nwant %v", tc.h1, tc.h2, got, tc.want)
			}
		})
	}
}
