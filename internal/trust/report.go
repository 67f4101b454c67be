package trust

import (
	"fmt"

	"csbench/internal/report"
	"csbench/internal/summary"
)

// The marks a report puts beside every figure of a cell.
const (
	MarkDisturbed = "⚑"
	MarkUnsteady  = "≈"
)

// Marks is the marks of a cell, "" for none.
func Marks(c *summary.Cell) string {
	if c.Trust == nil {
		return ""
	}
	m := ""
	if c.Trust.Disturbed {
		m += MarkDisturbed
	}
	if c.Trust.Unsteady {
		m += MarkUnsteady
	}
	return m
}

// GroupMarks is the marks of any of cells (the repetitions of one point):
// a median is as trustworthy as its least trustworthy repetition.
func GroupMarks(cells []*summary.Cell) string {
	d, u := false, false
	for _, c := range cells {
		if c.Trust != nil {
			d = d || c.Trust.Disturbed
			u = u || c.Trust.Unsteady
		}
	}
	m := ""
	if d {
		m += MarkDisturbed
	}
	if u {
		m += MarkUnsteady
	}
	return m
}

// MarkGroupRow is MarkRow for a row that stands for several repetitions.
func MarkGroupRow(row []string, cells []*summary.Cell, from int) []string {
	m := GroupMarks(cells)
	if m == "" {
		return row
	}
	for i := from; i < len(row); i++ {
		if row[i] != "" && row[i] != "—" {
			row[i] += " " + m
		}
	}
	return row
}

// MarkRow puts c's marks beside every figure of a table row: the columns
// from index from on that hold a value (not "—" or empty).
func MarkRow(row []string, c *summary.Cell, from int) []string {
	m := Marks(c)
	if m == "" {
		return row
	}
	for i := from; i < len(row); i++ {
		if row[i] != "" && row[i] != "—" && row[i] != c.Status {
			row[i] += " " + m
		}
	}
	return row
}

// TimelineChart renders trust.Chart of cells into the report, if any cell
// has a timeline.
func TimelineChart(d *report.Doc, dir, generatedBy string, cells []summary.Cell) {
	ch := Chart(cells)
	if ch == nil {
		return
	}
	svg, skipped := ch.Render(dir, generatedBy)
	report.Chart(d, ch.Title, svg, skipped)
	d.P("One line per cell: the sender's NIC transmit rate (sar, frames with their Ethernet header) each second of the cell's measured window, after its warm-up (\"(tool)\": the tool's own per-second figure, iperf3's intervals); a cell marked %s in the legend was unsteady, %s disturbed.", MarkUnsteady, MarkDisturbed)
}

// Section writes "How far to trust each cell": a line per marked cell
// saying what disturbed it or how unsteady it was, and what the marks mean.
func Section(d *report.Doc, cells []summary.Cell) {
	d.H(2, "How far to trust each cell")
	var lines []string
	judged := 0
	for i := range cells {
		c := &cells[i]
		if c.Trust == nil {
			continue
		}
		judged++
		if l := DisturbLine(c.Trust); l != "" {
			lines = append(lines, fmt.Sprintf("- %s `%s` %s.", MarkDisturbed, c.Name, l))
		}
		if l := UnsteadyLine(c.Trust); l != "" {
			lines = append(lines, fmt.Sprintf("- %s `%s` %s.", MarkUnsteady, c.Name, l))
		}
	}
	switch {
	case judged == 0:
		d.P("This run has no pidstat of all processes (`monitors/*/procs-pidstat.txt`): whether other load disturbed its cells is not known.")
		return
	case len(lines) == 0:
		d.P("No cell was disturbed or unsteady.")
	default:
		d.P("%s", joinLines(lines))
	}
	d.P("%s marks a **disturbed** cell: processes other than the run's (pidstat of every process, the run's own pidstat files, the sysstat monitors and kernel threads apart) plus steal (mpstat) took more than DISTURB_THRESHOLD of one core on a host, mean over the cell; the run queue is sar -q's. %s marks an **unsteady** cell: its per-second throughput after warm-up varied or trended more than UNSTEADY_CV allows. Every figure of a marked cell carries its mark.", MarkDisturbed, MarkUnsteady)
}

func joinLines(ls []string) string {
	s := ""
	for i, l := range ls {
		if i > 0 {
			s += "\n"
		}
		s += l
	}
	return s
}

// VerdictSection is the "Verdict per cell" table of a phase whose rows are
// its cells: the cell (in a column named first), what bound it and the
// evidence, each with its marks.
func VerdictSection(d *report.Doc, s *summary.Summary, first string) {
	d.H(2, "Verdict per cell")
	var rows [][]string
	for i := range s.Cells {
		c := &s.Cells[i]
		if c.Verdict != nil {
			rows = append(rows, MarkRow([]string{"`" + c.Name + "`", "**" + c.Verdict.Bound + "**", c.Verdict.Evidence}, c, 1))
		}
	}
	d.Table([]string{first, "bound by", "evidence"}, rows)
}
