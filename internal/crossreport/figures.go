package crossreport

import (
	"csbench/internal/httpphase"
	"csbench/internal/phase0"
	"csbench/internal/summary"
)

// heldFigures are the Phase 3 figures the summary quotes (internal/phase3
// writes them; read only here).
type heldFigures struct {
	ConnectionsEstablished *float64 `json:"connections_established"`
	ConnectionsTarget      *float64 `json:"connections_target"`
	ServerRSSPerConnKB     *float64 `json:"server_rss_per_conn_kb"` // server RSS per held connection, KiB
	ServerRSSHeldMB        *float64 `json:"server_rss_held_mb"`     // server RSS while the connections were held, MB
	ServerRSSMB            *float64 `json:"server_rss_mb"`          // the server's largest RSS over the cell, MB
	RPSAchieved            *float64 `json:"rps_achieved"`           // lowrate: requests answered per second
	RPSTarget              *float64 `json:"rps_target"`             // lowrate: requests offered per second
	LatencyP99Ms           *float64 `json:"latency_p99_ms"`
}

// connFigures are the Phase 4 figures the summary quotes (internal/phase4
// writes them; read only here).
type connFigures struct {
	Backlog               *float64 `json:"backlog"`            // the listen backlog asked for
	ConnectionsTarget     *float64 `json:"connections_target"` // a burst's connections
	ServerListenOverflows *float64 `json:"server_listen_overflows"`
	ConnectionsNeverUp    *float64 `json:"connections_never_up"`
	LatencyP99Ms          *float64 `json:"latency_p99_ms"`
	RateTargetPerS        *float64 `json:"rate_target_per_s"`   // connections offered per second
	RateAchievedPerS      *float64 `json:"rate_achieved_per_s"` // connections made per second
	// ServerCPUUsPerConn and ServerCPUUsPerHandshake are the server's
	// CPU per connection (per TLS handshake), µs.
	ServerCPUUsPerConn      *float64 `json:"server_cpu_us_per_conn"`
	ServerCPUUsPerHandshake *float64 `json:"server_cpu_us_per_handshake"`
	// PredictedSustainableRatePerS is the port-bound rate predicted, /s.
	PredictedSustainableRatePerS *float64 `json:"predicted_sustainable_rate_per_s"`
}

// cellFigure is one figure of a cell; nil when not measured.
type cellFigure func(*summary.Cell) *float64

// iperfFig is a figure of a Phase 0 cell.
func iperfFig(get func(*phase0.Figures) *float64) cellFigure {
	return func(c *summary.Cell) *float64 {
		var f phase0.Figures
		summary.Figures(c.Metrics, &f)
		return get(&f)
	}
}

// httpFig is a figure of a Phase 1 or 2 cell.
func httpFig(get func(*httpphase.Figures) *float64) cellFigure {
	return func(c *summary.Cell) *float64 {
		f := httpphase.FiguresOf(c)
		return get(&f)
	}
}

// heldFig is a figure of a Phase 3 cell.
func heldFig(get func(*heldFigures) *float64) cellFigure {
	return func(c *summary.Cell) *float64 {
		var f heldFigures
		summary.Figures(c.Metrics, &f)
		return get(&f)
	}
}

// connOf is a Phase 4 cell's figures.
func connOf(c *summary.Cell) connFigures {
	var f connFigures
	summary.Figures(c.Metrics, &f)
	return f
}

var (
	iperfMbps   = iperfFig(func(f *phase0.Figures) *float64 { return f.ThroughputMbps })
	iperfRetr   = iperfFig(func(f *phase0.Figures) *float64 { return f.Retransmits })
	httpRPS     = httpFig(func(f *httpphase.Figures) *float64 { return f.RPS })
	httpMbps    = httpFig(func(f *httpphase.Figures) *float64 { return f.ThroughputMbps })
	httpUtil    = httpFig(func(f *httpphase.Figures) *float64 { return f.LinkUtilization })
	httpP99     = httpFig(func(f *httpphase.Figures) *float64 { return f.LatencyP99Ms })
	heldEstab   = heldFig(func(f *heldFigures) *float64 { return f.ConnectionsEstablished })
	heldTarget  = heldFig(func(f *heldFigures) *float64 { return f.ConnectionsTarget })
	heldRSSConn = heldFig(func(f *heldFigures) *float64 { return f.ServerRSSPerConnKB })
	heldRSSHeld = heldFig(func(f *heldFigures) *float64 { return f.ServerRSSHeldMB })
	heldRSS     = heldFig(func(f *heldFigures) *float64 { return f.ServerRSSMB })
	heldRPS     = heldFig(func(f *heldFigures) *float64 { return f.RPSAchieved })
	heldLoad    = heldFig(func(f *heldFigures) *float64 { return f.RPSTarget })
	heldP99     = heldFig(func(f *heldFigures) *float64 { return f.LatencyP99Ms })
)

// figVal is a figure of c, NaN when not measured.
func figVal(c *summary.Cell, get cellFigure) float64 { return summary.Val(get(c)) }
