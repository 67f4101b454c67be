package httpphase

import (
	"errors"
	"testing"
)

// Check's verdicts: none carried the payload; error statuses at, below and
// above NON2XX_MAX; oha's codes named; a wrong setting refused.
func TestCheck(t *testing.T) {
	wrk := func(resp, non2xx float64) *Load {
		return &Load{Tool: "wrk", Responses: resp, OK: resp - non2xx, ErrorsTotal: non2xx,
			StatusCodes: map[string]float64{"2xx/3xx": resp - non2xx, "non-2xx/3xx": non2xx}}
	}
	oha := &Load{Tool: "oha", Responses: 1000, OK: 990, ErrorsTotal: 10,
		StatusCodes: map[string]float64{"200": 990, "500": 7, "503": 3}}
	for _, tc := range []struct {
		l    *Load
		max  float64
		want string // "" is ok
	}{
		{wrk(1000, 0), 0, ""},
		{wrk(1000, 10), 0.01, ""},
		{wrk(1000, 10), 0, "10 of 1000 responses (1.00 %) had an error status (by status: non-2xx/3xx 10; wrk does not tell the codes apart), above NON2XX_MAX=0"},
		{wrk(1000, 11), 0.01, "11 of 1000 responses (1.10 %) had an error status (by status: non-2xx/3xx 11; wrk does not tell the codes apart), above NON2XX_MAX=0.01"},
		{wrk(519, 519), 1, "no response carried the payload (519 responses, 519 errors (by status: non-2xx/3xx 519; wrk does not tell the codes apart))"},
		{oha, 0.001, "10 of 1000 responses (1.00 %) had an error status (by status: 500 7, 503 3), above NON2XX_MAX=0.001"},
	} {
		err := Check(tc.l, tc.max)
		var st *StatusError
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Check(%+v, %v) = %v, want ok", tc.l, tc.max, err)
		case tc.want != "" && (!errors.As(err, &st) || err.Error() != tc.want):
			t.Errorf("Check = %v,\n want %s", err, tc.want)
		}
	}
	for v, ok := range map[string]bool{"": true, "0": true, "0.5": true, "1": true, "2": false, "-0.1": false, "x": false} {
		if _, err := Non2xxMax(map[string]string{Non2xxKey: v}); (err == nil) != ok {
			t.Errorf("Non2xxMax(%q): %v", v, err)
		}
	}
}
