package compare

import (
	"encoding/json"
	"io"
	"math"
	"strings"
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
	// Multiplexing: each HTTP/1.1 cell beside its HTTP/2 partners (Mux);
	// absent when the runs have none.
	Multiplexing []DocMux `json:"multiplexing,omitempty"`
}

// DocMux is one MuxRow: the cells, the run each is from ("a" or "b"),
// the HTTP/2 cell's connections and streams per connection, and each
// figure's median in both cells (null where not measured).
type DocMux struct {
	HTTP1Cell         string   `json:"http1_cell"`
	HTTP1Run          string   `json:"http1_run"`
	HTTP2Cell         string   `json:"http2_cell"`
	HTTP2Run          string   `json:"http2_run"`
	HTTP2Connections  *int     `json:"http2_connections"`
	HTTP2Streams      int      `json:"http2_streams_per_connection"`
	RequestsInFlight  *int     `json:"requests_in_flight"`
	RPSRatio          *float64 `json:"rps_ratio_http2_over_http1"`
	HTTP1P99Ms        *float64 `json:"http1_latency_p99_ms"`
	HTTP2P99Ms        *float64 `json:"http2_latency_p99_ms"`
	HTTP1ServerCPU    *float64 `json:"http1_server_cpu_us_per_req"`
	HTTP2ServerCPU    *float64 `json:"http2_server_cpu_us_per_req"`
	ServerCPUChange   *float64 `json:"server_cpu_per_req_change_pct"`
	HTTP1ClientCPU    *float64 `json:"http1_client_cpu_us_per_req"`
	HTTP2ClientCPU    *float64 `json:"http2_client_cpu_us_per_req"`
	ClientCPUChange   *float64 `json:"client_cpu_per_req_change_pct"`
	HTTP1ServerRSS    *float64 `json:"http1_server_rss_per_conn_kb"`
	HTTP2ServerRSS    *float64 `json:"http2_server_rss_per_conn_kb"`
	HTTP1ClientRSS    *float64 `json:"http1_client_rss_per_conn_kb"`
	HTTP2ClientRSS    *float64 `json:"http2_client_rss_per_conn_kb"`
	HTTP1KernelKB     *float64 `json:"http1_kernel_kb_per_conn"`
	HTTP2KernelKB     *float64 `json:"http2_kernel_kb_per_conn"`
	CPUMovedOn        *string  `json:"cpu_moved_on"` // server, client, neither (MuxMoved)
	CPUMovedThreshold float64  `json:"cpu_moved_threshold_pct"`
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

func (x MuxRow) doc() DocMux {
	pct := func(v float64) *float64 { return finite(v * 100) }
	d := DocMux{HTTP1Cell: x.H1, HTTP1Run: strings.ToLower(x.H1Run), HTTP2Cell: x.H2, HTTP2Run: strings.ToLower(x.H2Run),
		HTTP2Connections: positive(x.Conns), HTTP2Streams: x.Streams, RequestsInFlight: positive(x.InFlight),
		RPSRatio: finite(x.RPSRatio), HTTP1P99Ms: finite(x.P99Ms[0]), HTTP2P99Ms: finite(x.P99Ms[1]),
		HTTP1ServerCPU: finite(x.ServerCPU[0]), HTTP2ServerCPU: finite(x.ServerCPU[1]), ServerCPUChange: pct(x.ServerCPUChange),
		HTTP1ClientCPU: finite(x.ClientCPU[0]), HTTP2ClientCPU: finite(x.ClientCPU[1]), ClientCPUChange: pct(x.ClientCPUChange),
		HTTP1ServerRSS: finite(x.ServerRSS[0]), HTTP2ServerRSS: finite(x.ServerRSS[1]),
		HTTP1ClientRSS: finite(x.ClientRSS[0]), HTTP2ClientRSS: finite(x.ClientRSS[1]),
		HTTP1KernelKB: finite(x.KernelKB[0]), HTTP2KernelKB: finite(x.KernelKB[1]),
		CPUMovedThreshold: MuxMoved * 100}
	if x.Moved != "" {
		d.CPUMovedOn = &x.Moved
	}
	return d
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
	// PValue is the two-sided Mann-Whitney U test's (null when it was not
	// run), Significance its verdict at Alpha: significant,
	// not_significant or too_few (null when a side has no value).
	PValue       *float64 `json:"p_value"`
	Significance *string  `json:"significance"`
	Alpha        float64  `json:"alpha"`
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
		p, v := row.Significance(r.alpha())
		dr.PValue, dr.Alpha = finite(p), r.alpha()
		if v != "" {
			dr.Significance = &v
		}
		d.Rows = append(d.Rows, dr)
	}
	for _, x := range r.Bounds {
		d.Bounds = append(d.Bounds, DocBound{Payload: x[0], A: x[1], B: x[2]})
	}
	for _, x := range r.Mux {
		d.Multiplexing = append(d.Multiplexing, x.doc())
	}
	return d
}

// WriteJSON writes the Document, indented, with a final newline.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r.Document())
}
