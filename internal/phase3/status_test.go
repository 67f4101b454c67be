package phase3

import (
	"errors"
	"strings"
	"testing"

	"csbench/internal/httpphase"
	"csbench/internal/summary"
)

// The verdict on a low-rate cell's requests: any failed request fails it,
// with the count and the causes; none, or no count, passes.
func TestRequestsVerdict(t *testing.T) {
	var st *httpphase.StatusError
	err := requestsVerdict(summary.F(10), map[string]float64{"status": 10})
	if !errors.As(err, &st) || err.Error() != "10 requests failed (status 10)" {
		t.Errorf("10 failed: %v", err)
	}
	for _, f := range []*float64{nil, summary.F(0)} {
		if err := requestsVerdict(f, nil); err != nil {
			t.Errorf("%v failed: %v", f, err)
		}
	}
}

// csb check connclient on real results: a low-rate cell against a server
// answering 500 to one request in 100 fails with the summary's words; an
// idle one and a clean low-rate one pass; what is not connclient's result
// is refused as such, not as a cell with errors.
func TestCheckFile(t *testing.T) {
	var st *httpphase.StatusError
	err := CheckFile("testdata/lowrate-status500.client-1.json")
	if !errors.As(err, &st) || err.Error() != "10 requests failed (status 10)" {
		t.Errorf("status500: %v", err)
	}
	for _, f := range []string{"testdata/run/raw/idle-800.client-1.json", "testdata/run/raw/lowrate-800-100rps.client-1.json"} {
		if err := CheckFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	err = CheckFile("testdata/run/raw/limits.client.env")
	if err == nil || errors.As(err, &st) || !strings.Contains(err.Error(), "not connclient's JSON") {
		t.Errorf("not JSON: %v", err)
	}
}
