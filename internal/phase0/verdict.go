package phase0

import (
	"fmt"
	"strings"

	"csbench/internal/decimal"
	"csbench/internal/summary"
)

// Phase 0's verdict codes (summary.json verdict.code; docs/verdicts.md).
const (
	// CodeLink: the throughput reached AtCeiling of the link's TCP ceiling.
	CodeLink = "link"
	// CodeCPU: below the ceiling with a core of some host at 90 % or more.
	CodeCPU = "cpu"
	// CodeCPUNoLink: no link to compare with (a ceiling not known, such as
	// the loopback's): what moved the bytes was CPU.
	CodeCPUNoLink = "cpu_no_link"
	// CodeUnclear: below the ceiling with no core saturated.
	CodeUnclear = "unclear"
	// CodeFailed: no throughput was measured.
	CodeFailed = "failed"
)

// Codes is the closed list of Phase 0's verdict codes, in the order its
// rules decide them.
var Codes = []string{CodeFailed, CodeCPUNoLink, CodeLink, CodeCPU, CodeUnclear}

// judged is a cell as the rules read it.
type judged struct {
	s      *summary.Summary
	status string
	f      *Figures
}

// rule is one verdict: it returns the verdict when it holds, else nil.
type rule func(j *judged) *summary.Verdict

// rules decide a cell's verdict in this order; the first that holds is it.
var rules = []rule{failedRule, noLinkRule, linkRule, cpuRule, unclearRule}

// verdict names what bound a cell of status status, with the evidence.
func verdict(s *summary.Summary, status string, f *Figures) *summary.Verdict {
	j := &judged{s: s, status: status, f: f}
	for _, r := range rules {
		if v := r(j); v != nil {
			return v
		}
	}
	return nil // unreachable: unclearRule always holds
}

// failedRule: no throughput was measured.
func failedRule(j *judged) *summary.Verdict {
	if j.status == "ok" && j.f.ThroughputMbps != nil {
		return nil
	}
	return &summary.Verdict{Code: CodeFailed, Bound: "none (failed)", Evidence: "no throughput was measured"}
}

// noLinkRule: no TCP ceiling to compare with.
func noLinkRule(j *judged) *summary.Verdict {
	if j.s.Link.TCPCeilingMbps != nil {
		return nil
	}
	return &summary.Verdict{Code: CodeCPUNoLink, Bound: "cpu (no link)",
		Evidence: fmt.Sprintf("%s Mbit/s over %s; %s; %s", decimal.Format(j.f.ThroughputMbps, 0), j.s.Link.CeilingBasis, j.cpu(), j.retr())}
}

// linkRule: the throughput reached AtCeiling of the TCP ceiling.
func linkRule(j *judged) *summary.Verdict {
	if j.utilization() < AtCeiling {
		return nil
	}
	return &summary.Verdict{Code: CodeLink, Bound: "link", Evidence: j.evidence()}
}

// cpuRule: below the ceiling, a core of some host 90 % busy or more.
func cpuRule(j *judged) *summary.Verdict {
	if j.f.maxCore() < 90 {
		return nil
	}
	return &summary.Verdict{Code: CodeCPU, Bound: "cpu", Evidence: j.evidence()}
}

// unclearRule: below the ceiling with no core saturated.
func unclearRule(j *judged) *summary.Verdict {
	return &summary.Verdict{Code: CodeUnclear, Bound: "unclear (below the link, CPU not saturated)",
		Evidence: j.evidence() + "; check the NIC (ethtool), cabling, duplex and the retransmits"}
}

// utilization is the cell's share of the TCP ceiling (0 when unknown).
func (j *judged) utilization() float64 {
	if j.f.LinkUtilization == nil {
		return 0
	}
	return *j.f.LinkUtilization
}

// evidence is the throughput against the ceiling, the retransmits and
// the busiest cores.
func (j *judged) evidence() string {
	return fmt.Sprintf("%s Mbit/s = %.1f%% of the %s Mbit/s TCP ceiling; %s; %s", decimal.Format(j.f.ThroughputMbps, 0), j.utilization()*100,
		decimal.Format(j.s.Link.TCPCeilingMbps, 1), j.retr(), j.cpu())
}

func (j *judged) retr() string {
	return fmt.Sprintf("%s retransmits", decimal.Format(j.f.Retransmits, 0))
}

// cpu is each host's busiest core.
func (j *judged) cpu() string {
	f := j.f
	if j.s.Clients == nil {
		return fmt.Sprintf("busiest core: server %s%%, client %s%%", decimal.Format(f.CPU["server"].MaxCorePct, 0), decimal.Format(f.CPU["client"].MaxCorePct, 0))
	}
	parts := []string{"server " + decimal.Format(f.CPU["server"].MaxCorePct, 0) + "%"}
	for _, h := range j.s.Clients.Hosts {
		parts = append(parts, h.Label+" "+decimal.Format(f.CPU[h.Label].MaxCorePct, 0)+"%")
	}
	return "busiest core: " + strings.Join(parts, ", ")
}
