package phase3

import (
	"csbench/internal/rundir"
	"io"

	"csbench/internal/connresult"
	"csbench/internal/httpphase"
	"csbench/internal/summary"
)

// requestsVerdict is the one verdict on a low-rate scenario's requests,
// which the runner (csb check connclient, on each process's result) and
// the summary (on the cell's, every process's summed) both read: nil when
// none failed, else a *httpphase.StatusError "N requests failed
// (causes)". On an open schedule a request that got no whole 2xx response
// (timed out, refused, reset, or an error status) is lost, so any one
// makes the cell not ok; its figures stand.
func requestsVerdict(failed *float64, errs map[string]float64) error {
	if failed == nil || *failed <= 0 {
		return nil
	}
	return httpphase.StatusErrorf("%.0f requests failed (%s)", *failed, causes(errs))
}

// CheckResult is csb check connclient: the result document connclient
// printed (any mode) is well-formed; a low-rate one's requests pass
// requestsVerdict.
func CheckResult(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	res, err := connresult.DecodeResult("connclient's result", b)
	if err != nil {
		return err
	}
	if res.Lowrate == nil {
		return nil
	}
	errs := map[string]float64{}
	for k, v := range res.Common.Errors {
		errs[k] = float64(v)
	}
	return requestsVerdict(summary.F(float64(res.Lowrate.RequestsFailed)), errs)
}

// CheckFile is CheckResult on a file.
func CheckFile(path string) error {
	f, err := rundir.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return CheckResult(f)
}
