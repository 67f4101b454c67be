package parse

import (
	"strings"
	"testing"
)

func TestParseOhaReal(t *testing.T) {
	// Real output of oha --no-tui -j -c 20 -z 10s (oha 1.x), unedited.
	res, err := ParseOha(open(t, "oha-json-c20-z10s.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Responses != 27653 || res.Errors != 20 || res.DeadlineAborted != 20 || res.RequestsTotal != 27673 {
		t.Errorf("responses %d, errors %d, deadline %d, total %d", res.Responses, res.Errors, res.DeadlineAborted, res.RequestsTotal)
	}
	if res.ErrorsExceptDeadline() != 0 || res.Non2xx() != 0 {
		t.Errorf("ErrorsExceptDeadline %d, Non2xx %d", res.ErrorsExceptDeadline(), res.Non2xx())
	}
	// Quirk 1: successRate leaves the 20 deadline aborts out: 1, not 27653/27673.
	wantFloat(t, "SuccessRate", res.SuccessRate, 1, 0)
	// Quirk 2: requestsPerSec counts them in: 27673 / 10.003119191.
	if want := 27673 / 10.003119191; !approx(res.RequestsPerSecond, want, 1e-6) {
		t.Errorf("RequestsPerSecond = %v, want (responses+errors)/total = %v", res.RequestsPerSecond, want)
	}
	if res.TotalS != 10.003119191 || res.TotalDataBytes != 110612 {
		t.Errorf("TotalS %v, TotalDataBytes %d", res.TotalS, res.TotalDataBytes)
	}
	if res.SizePerRequestBytes == nil || *res.SizePerRequestBytes != 4 {
		t.Errorf("SizePerRequestBytes = %v", res.SizePerRequestBytes)
	}
	wantFloat(t, "LatencyMeanMs", res.LatencyMeanMs, 7.225086946841218, 1e-9)
	wantFloat(t, "LatencySlowestMs", res.LatencySlowestMs, 71.233484, 1e-9)
	wantFloat(t, "LatencyFastestMs", res.LatencyFastestMs, 1.477021, 1e-9)
	wantFloat(t, "LatencyP50Ms", res.LatencyP50Ms, 4.653315, 1e-9)
	wantFloat(t, "LatencyP90Ms", res.LatencyP90Ms, 15.124434, 1e-9)
	wantFloat(t, "LatencyP99Ms", res.LatencyP99Ms, 41.193928, 1e-9)
	wantFloat(t, "LatencyP999Ms", res.LatencyP999Ms, 50.760319, 1e-9)
	wantFloat(t, "LatencyP9999Ms", res.LatencyP9999Ms, 70.767424, 1e-9)
	if len(res.LatencyPercentilesMs) != 9 || !approx(res.LatencyPercentilesMs["p10"], 3.054799, 1e-9) {
		t.Errorf("LatencyPercentilesMs = %v", res.LatencyPercentilesMs)
	}
	if res.StatusCodes[200] != 27653 || len(res.StatusCodes) != 1 {
		t.Errorf("StatusCodes = %v", res.StatusCodes)
	}
	// Quirk 3: histogram keys are strings; the buckets count the responses.
	h := res.ResponseTimeHistogram
	var n uint64
	for i, b := range h {
		n += b.Count
		if i > 0 && b.LatencyMs <= h[i-1].LatencyMs {
			t.Errorf("histogram not ascending at %d", i)
		}
	}
	if len(h) != 11 || n != res.Responses || !approx(h[0].LatencyMs, 1.477021, 1e-9) || h[1].Count != 23334 {
		t.Errorf("histogram: %d buckets, %d responses, first %+v", len(h), n, h[0])
	}
}

func TestParseOhaSchemaErrors(t *testing.T) {
	// Hand-written from oha's JSON printer (newer layout: firstByte fields),
	// with non-2xx codes and transport errors; see testdata/README.md.
	res, err := ParseOha(open(t, "oha-schema-errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Responses != 9500 || res.Errors != 100 || res.DeadlineAborted != 50 || res.RequestsTotal != 9600 {
		t.Errorf("responses %d, errors %d, deadline %d, total %d", res.Responses, res.Errors, res.DeadlineAborted, res.RequestsTotal)
	}
	if res.Non2xx() != 500 || res.ErrorsExceptDeadline() != 50 {
		t.Errorf("Non2xx %d, ErrorsExceptDeadline %d", res.Non2xx(), res.ErrorsExceptDeadline())
	}
	// 404 and 503 are "successes" to oha; deadline aborts count nowhere.
	wantFloat(t, "SuccessRate", res.SuccessRate, float64(res.Responses)/float64(res.Responses+res.ErrorsExceptDeadline()), 1e-12)
	if want := float64(res.RequestsTotal) / res.TotalS; !approx(res.RequestsPerSecond, want, 1e-9) {
		t.Errorf("RequestsPerSecond = %v, want %v", res.RequestsPerSecond, want)
	}
	if res.StatusCodes[404] != 120 || res.StatusCodes[503] != 380 {
		t.Errorf("StatusCodes = %v", res.StatusCodes)
	}
	if res.ErrorDistribution["connection closed before message completed"] != 30 || len(res.ErrorDistribution) != 3 {
		t.Errorf("ErrorDistribution = %v", res.ErrorDistribution)
	}
	wantFloat(t, "LatencyP95Ms", res.LatencyP95Ms, 61.555, 1e-9)
	wantFloat(t, "LatencySlowestMs", res.LatencySlowestMs, 1002.131, 1e-9)
}

func TestParseOhaNoResponse(t *testing.T) {
	// Every request failed: oha's NaN latencies come out of serde_json as
	// null. They must be nil, not 0.
	res, err := ParseOha(open(t, "oha-schema-all-errors.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Responses != 0 || res.Errors != 41 || res.ErrorsExceptDeadline() != 40 {
		t.Errorf("responses %d, errors %d", res.Responses, res.Errors)
	}
	wantFloat(t, "SuccessRate", res.SuccessRate, 0, 0)
	wantNil(t, "LatencyMeanMs", res.LatencyMeanMs)
	wantNil(t, "LatencyFastestMs", res.LatencyFastestMs)
	wantNil(t, "LatencyP50Ms", res.LatencyP50Ms)
	wantNil(t, "LatencyP9999Ms", res.LatencyP9999Ms)
	wantNil(t, "SizePerRequestBytes", res.SizePerRequestBytes)
	if len(res.LatencyPercentilesMs) != 0 || len(res.ResponseTimeHistogram) != 0 {
		t.Errorf("percentiles %v, histogram %v", res.LatencyPercentilesMs, res.ResponseTimeHistogram)
	}
}

func TestParseOhaBadInput(t *testing.T) {
	real := string(fixture(t, "oha-json-c20-z10s.json"))
	for _, c := range []struct{ name, in, err string }{
		{"text", "Summary:\n  Success rate:\t100.00%\n", "not oha -j output"},
		{"iperf3", string(fixture(t, "iperf3-p1.json")), "not oha -j output"},
		{"cut", real[:len(real)/2], "not oha -j output"},
		{"status code", strings.Replace(real, `"200": 27653`, `"OK": 27653`, 1), `status code "OK"`},
		{"histogram key", strings.Replace(real, `"0.0642578377": 1`, `"x": 1`, 1), `responseTimeHistogram key "x"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseOha(strings.NewReader(c.in))
			wantErrContains(t, err, c.err)
		})
	}
}
