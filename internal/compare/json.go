package compare

import (
	"encoding/json"
	"io"
	"math"
)

// DocumentVersion is the version of Document, bumped on any incompatible
// change to it.
const DocumentVersion = 1

// Document is a comparison as JSON (csb compare -json): what a script reads
// instead of the Markdown. A value that cannot be computed (a ratio over 0,
// a median of nothing) is null.
type Document struct {
	SchemaVersion int      `json:"schema_version"`
	Phase         string   `json:"phase"`
	A             string   `json:"a"` // run_id of the baseline
	B             string   `json:"b"`
	Environment   *Env     `json:"environment"`
	Rows          []DocRow `json:"rows"`
	OnlyInA       []string `json:"only_in_a"`
	OnlyInB       []string `json:"only_in_b"`
	// Bounds (Phase 5): per payload what ended each run's search.
	Bounds []DocBound `json:"capacity_bounds,omitempty"`
}

// DocBound is one payload's capacityBound in A and in B.
type DocBound struct {
	Payload string `json:"payload"`
	A       string `json:"a"`
	B       string `json:"b"`
}

// DocRow is one Row: every repetition's value in both runs, the medians'
// change and ratio, and BeyondSpread ("" when there is no spread: null).
type DocRow struct {
	Cell         string    `json:"cell"`
	Metric       string    `json:"metric"`
	A            []float64 `json:"a"`
	B            []float64 `json:"b"`
	Change       *float64  `json:"change"`
	Ratio        *float64  `json:"ratio"`
	BeyondSpread *string   `json:"beyond_spread"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Document converts the comparison.
func (r *Result) Document() Document {
	d := Document{SchemaVersion: DocumentVersion, Phase: r.A.Phase, A: r.A.RunID, B: r.B.RunID, Environment: r.Env,
		Rows: []DocRow{}, OnlyInA: append([]string{}, r.OnlyInA...), OnlyInB: append([]string{}, r.OnlyInB...)}
	for _, row := range r.Rows {
		dr := DocRow{Cell: row.Cell, Metric: row.Metric, A: row.A, B: row.B, Change: finite(row.Change()), Ratio: finite(row.Ratio())}
		if s := row.BeyondSpread(); s != "" {
			dr.BeyondSpread = &s
		}
		d.Rows = append(d.Rows, dr)
	}
	for _, x := range r.Bounds {
		d.Bounds = append(d.Bounds, DocBound{Payload: x[0], A: x[1], B: x[2]})
	}
	return d
}

// WriteJSON writes the Document, indented, with a final newline.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Document())
}
