package phase4

import (
	"slices"
	"testing"

	"csbench/internal/summary"
)

// The figures structs write the keys Phase 4 cells have always had: the
// codec accepts them (it panics on a malformed one) and no key is lost or
// renamed (summary.json's readers depend on them).
func TestFigureNames(t *testing.T) {
	cell := []string{
		"rate_target_per_s", "rate_achieved_per_s", "rate_achieved_ratio",
		"connections_target", "connections_completed", "connections_failed", "connections_never_up", "error_pct",
		"errors_eaddrnotavail", "errors_econnreset", "errors_econnrefused", "errors_etimedout", "first_eaddrnotavail_s",
		"connect_latency_p50_ms", "connect_latency_p99_ms", "connect_latency_max_ms",
		"latency_p50_ms", "latency_p99_ms", "latency_max_ms", "schedule_lag_p99_ms",
		"latency_under_1s", "latency_1s_to_3s", "latency_3s_to_7s", "latency_7s_and_more",
		"predicted_sustainable_rate_per_s", "predicted_cell_rate_per_s", "predicted_exhaust_s", "predicted_eaddrnotavail",
		"predicted_client_time_wait", "predicted_server_time_wait",
		"ports", "ports_left", "client_time_wait_before", "client_time_wait_peak", "server_time_wait_peak",
		"backlog", "server_somaxconn", "server_abort_on_overflow", "server_cpu_us_per_conn", "accept_p99_bound_ms",
		"burst_issue_s", "accept_every_ms", "predicted_listen_overflow",
		"tls_handshakes_full", "tls_handshakes_resumed",
		"tls_handshake_full_p50_ms", "tls_handshake_full_p99_ms", "tls_handshake_resumed_p50_ms", "tls_handshake_resumed_p99_ms",
		"server_cpu_us_per_handshake",
	}
	client := []string{
		"rate_target_per_s", "rate_achieved_per_s", "rate_achieved_ratio",
		"connections_target", "connections_completed", "connections_failed", "connections_never_up", "error_pct",
		"errors_eaddrnotavail", "errors_econnreset", "errors_econnrefused", "errors_etimedout", "first_eaddrnotavail_s",
		"connect_latency_p50_ms", "connect_latency_p99_ms", "latency_p50_ms", "latency_p99_ms", "latency_max_ms", "schedule_lag_p99_ms",
		"latency_under_1s", "latency_1s_to_3s", "latency_3s_to_7s", "latency_7s_and_more",
		"tls_handshakes_full", "tls_handshakes_resumed",
		"predicted_sustainable_rate_per_s", "predicted_cell_rate_per_s", "predicted_exhaust_s", "predicted_eaddrnotavail",
		"predicted_client_time_wait", "ports", "ports_left", "client_time_wait_before", "client_time_wait_peak",
		"client_proc_cpu_pct", "client_rss_mb", "client_cpu_us_per_conn", "host_cpu_pct", "host_cpu_max_core_pct",
	}
	for _, tc := range []struct {
		name string
		fig  any
		want []string
	}{{"Figures", Figures{}, cell}, {"ClientFigures", ClientFigures{}, client}} {
		got := summary.FigureNames(tc.fig)
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s writes %v, want %v", tc.name, got, want)
		}
	}
}
