package connresult

import (
	"strings"
	"testing"
)

// ReadRamp sums each process's last event: one still ramping, one holding,
// one that has printed nothing yet.
func TestReadRamp(t *testing.T) {
	a := "established=10/20 rate=5/s\n" + `{"event":"ramp","established":10,"target":20,"failed":0,"rate_per_s":5,"elapsed_s":1}` + "\n" +
		`{"event":"ramp","established":15,"target":20,"failed":1,"rate_per_s":4.6,"elapsed_s":2}` + "\n"
	b := `{"event":"ramp","established":19,"target":20,"failed":0,"rate_per_s":3,"elapsed_s":1}` + "\n" +
		`{"event":"holding","established":20,"target":20,"failed":0,"elapsed_s":2}` + "\n"
	st := ReadRamp(strings.NewReader(a), strings.NewReader(b), strings.NewReader(""))
	want := RampState{Procs: 3, Reported: 2, Done: 1, Established: 35, Target: 40, Failed: 1, RatePerS: 4.6}
	if st != want {
		t.Errorf("got %+v, want %+v", st, want)
	}
}
