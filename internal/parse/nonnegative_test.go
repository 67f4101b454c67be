package parse

import (
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Output the real tools printed, with one value made negative: each
// parser refuses it, naming the tool and the field, with ErrImpossible.
func TestNegativeValuesRefused(t *testing.T) {
	iperf3 := func(r io.Reader) error { _, err := ParseIperf3(r); return err }
	wrk := func(r io.Reader) error { _, err := ParseWrkJSON(r); return err }
	pidstat := func(r io.Reader) error { _, err := ParsePidstat(r); return err }
	oha := func(r io.Reader) error { _, err := ParseOha(r); return err }
	for _, c := range []struct {
		file, re, new, want string
		parse               func(io.Reader) error
	}{
		{"iperf3-p1.json", `"bits_per_second":\s+35658701063.693115`, `"bits_per_second": -1000`,
			"iperf3: end.streams[0].receiver.bits_per_second is -1000: below zero, which iperf3 never prints", iperf3},
		{"iperf3-p1.json", `"remote_total":\s+[0-9.]+`, `"remote_total": -3.5`,
			"iperf3: end.cpu_utilization_percent.remote_total is -3.5: below zero", iperf3},
		{"wrk-200.txt", `"latency_p99_us":[0-9.]+`, `"latency_p99_us":-5000`,
			"wrk: latency_p99_us is -5000: below zero, which wrk never prints", wrk},
		{"pidstat-two-pids.txt", ` 78\.00     1     28\.00`, `-78.00     1     28.00`,
			"pidstat: line 5: %CPU is -78: below zero, which pidstat never prints", pidstat},
		{"oha-json-c20-z10s.json", `"requestsPerSec": [0-9.]+`, `"requestsPerSec": -1000`,
			"oha: summary.requestsPerSec is -1000: below zero, which oha never prints", oha},
	} {
		b, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.parse(strings.NewReader(string(b))); err != nil {
			t.Fatalf("%s as the tool printed it: %v", c.file, err)
		}
		re := regexp.MustCompile(c.re)
		loc := re.FindStringIndex(string(b))
		if loc == nil {
			t.Fatalf("%s: %s not found", c.file, c.re)
		}
		edited := string(b[:loc[0]]) + c.new + string(b[loc[1]:])
		err = c.parse(strings.NewReader(edited))
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrImpossible) {
			t.Errorf("%s: err = %v, want %q (ErrImpossible)", c.file, err, c.want)
		}
	}
}
