package cli

import "csbench/internal/phase0"

func init() {
	Phases["00-iperf3"] = phase0.Phase{}
}
