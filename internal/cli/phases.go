package cli

import (
	"io"

	"csbench/internal/parse"
	"csbench/internal/phase0"
)

func init() {
	Checks["iperf3"] = func(r io.Reader) error { _, err := parse.ParseIperf3(r); return err }
	Phases["00-iperf3"] = phase0.Phase{}
}
