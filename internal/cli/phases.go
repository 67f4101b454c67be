package cli

import (
	"io"

	"csbench/internal/parse"
	"csbench/internal/phase0"
	"csbench/internal/phase1"
	"csbench/internal/phase2"
	"csbench/internal/phase3"
)

func init() {
	Checks["iperf3"] = func(r io.Reader) error { _, err := parse.ParseIperf3(r); return err }
	Phases["00-iperf3"] = phase0.Phase{}
	Phases["01-http-baseline"] = phase1.Phase{}
	Phases["02-http-matrix"] = phase2.Phase{}
	Phases["03-c10k"] = phase3.Phase{}
}
