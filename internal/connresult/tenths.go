package connresult

import "time"

// Tenths is an open-model schedule cut into ten equal slices of its
// duration, to tell a server that kept up over the schedule from one that
// fell behind while its totals still looked good: the answers received in
// each slice give the rate the server delivered once its queue had formed,
// and the mean latency of the requests due in each slice shows a queue
// that grows. Only counts and sums, so the results of every process on
// every client host merge exactly by adding them (they share one start and
// one duration). Only 2xx answers count.
type Tenths struct {
	// DueOK[k] is the 2xx answers of the requests due in slice k, and
	// DueLatencySumUs[k] their latencies from the due time, summed, µs.
	DueOK           [10]int64 `json:"due_ok"`
	DueLatencySumUs [10]int64 `json:"due_latency_sum_us"`
	// DoneOK[k] is the 2xx answers received in slice k of the schedule's
	// time; DoneOKAfter those received after its end (in the drain).
	DoneOK      [10]int64 `json:"done_ok"`
	DoneOKAfter int64     `json:"done_ok_after"`
}

// TenthsRecorder fills a Tenths for a schedule of the given duration.
type TenthsRecorder struct {
	slice time.Duration
	T     Tenths
}

// NewTenthsRecorder is a recorder for a schedule of duration d (> 0).
func NewTenthsRecorder(d time.Duration) TenthsRecorder {
	return TenthsRecorder{slice: max(d/10, 1)}
}

// Record accounts one 2xx answer of a request due at due and answered at
// done, both offsets from the schedule's start.
func (r *TenthsRecorder) Record(due, done time.Duration) {
	k := min(max(int(due/r.slice), 0), 9)
	r.T.DueOK[k]++
	r.T.DueLatencySumUs[k] += int64((done - due) / time.Microsecond)
	if j := int(done / r.slice); done >= 0 && j < 10 {
		r.T.DoneOK[j]++
	} else {
		r.T.DoneOKAfter++
	}
}

// Add adds o's counts to t.
func (t *Tenths) Add(o *Tenths) {
	for k := range t.DueOK {
		t.DueOK[k] += o.DueOK[k]
		t.DueLatencySumUs[k] += o.DueLatencySumUs[k]
		t.DoneOK[k] += o.DoneOK[k]
	}
	t.DoneOKAfter += o.DoneOKAfter
}

// Completed is the 2xx answers the tenths hold (each once, by its due
// slice): the result's requests_completed.
func (t *Tenths) Completed() int64 {
	var n int64
	for _, v := range t.DueOK {
		n += v
	}
	return n
}
