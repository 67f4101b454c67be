// Package connclient implements the connclient command: a TCP/HTTP client
// for Phase 3 (C10K) that opens and holds many keep-alive connections
// (idle) or drives a low, open-model request rate over many connections
// (lowrate), which wrk and oha cannot do.
//
// # Connections
//
// Connections are opened by a pool of -workers goroutines, paced at -rate
// connects/s (connect i is due at start + i/rate). A connection is a
// net.TCPConn dialed with TCP keep-alive probes off; with -source it is
// bound to that IP with IP_BIND_ADDRESS_NO_PORT, with -linger0 it has
// SO_LINGER=0. HTTP/1.1 is spoken directly on the connection (a precomputed
// GET and a minimal response parser, no net/http Transport), so every
// request goes on the connection it was assigned to, and a request/response
// allocates nothing.
//
// In idle mode each connection carries one GET /healthz; once answered it
// is kept as a slice entry only (no goroutine, no buffer). Once a second
// during the hold, and at its end, every connection is checked with a
// non-blocking recv(MSG_PEEK|MSG_DONTWAIT): EAGAIN means alive, 0 bytes
// means the server closed it.
//
// In lowrate mode each connection also carries one GET of -path when it is
// opened (a server's header timeout runs from accept, so an unused new
// connection would be closed before its first scheduled request), then one
// dispatcher goroutine keeps the schedule (request i due
// at start + i/rps, on connection i mod conns) and wakes the connection's
// goroutine; a busy connection sends late and the wait counts in the
// latency. The dispatcher sleeps on a timerfd (Linux) rather than a Go
// timer, which would fire up to 1 ms late.
//
// # Result
//
// One JSON object on stdout. Units are in the names; null means not
// measured (an interrupted phase, a percentile of nothing), never 0.
// Latencies come from log-linear histograms (µs resolution, <= 0.4 % error),
// maxima are exact.
//
// Both modes:
//
//	schema_version, tool, mode, status ("complete"|"partial"), argv,
//	started_at, finished_at (RFC 3339 UTC), go_version,
//	target, source (null: none), linger0, timeout_s, connect_workers,
//	rlimit_nofile_soft, rlimit_nofile_hard (after raising the soft limit),
//	connections_target, connect_rate_target_per_s,
//	connections_attempted, connections_established, connections_failed,
//	setup_s (first connect to last connection done; null if interrupted),
//	connect_rate_achieved_per_s,
//	connect_latency_{p50,p90,p99,max}_ms (TCP handshake, every connect that succeeded),
//	connect_latency_histogram (the histogram behind them, see below),
//	connections_alive_end (idle: at the end of the hold; lowrate: at the end of the run),
//	errors {cause: count}, status_codes {"200": count} (every response read,
//	the one that opened each connection included),
//	client_rss_mb (VmRSS; idle: end of hold, lowrate: mid-schedule),
//	client_goroutines (sampled with client_rss_mb)
//
// idle:
//
//	hold_s, hold_elapsed_s, first_drop_s (null: no drop seen),
//	drops {cause: count}, requests_completed,
//	request_latency_{p50,p99,max}_ms (the GET /healthz on each connection),
//	request_latency_histogram
//
// lowrate:
//
//	path, rps_target, duration_s, elapsed_s (start of schedule to last
//	response, at least duration_s), requests_scheduled, requests_sent,
//	requests_completed, requests_failed, requests_unsent,
//	rps_achieved (requests_completed / elapsed_s),
//	schedule_started_at (when request 0 was due; -start-file: the agreed moment),
//	latency_{p50,p90,p99,p999,max}_ms (from the due time: coordinated-omission corrected),
//	service_latency_{p50,p90,p99,p999,max}_ms (from the actual send),
//	sender_lag_{p50,p99,max}_ms (actual send - due time),
//	latency_histogram, service_latency_histogram, sender_lag_histogram
//
// A histogram is {unit "us", sub_bits, max_bits, count, min_us, max_us,
// buckets [[index, count], ...]} (non-empty buckets only, HistDump): every
// process uses the same buckets, so the histograms of several processes
// merge exactly (MergeDumps) and the merged percentiles are those one
// process holding every sample would have printed. The fields are an
// addition within schema version 1: results written before them have none,
// and a reader says its percentiles of several processes are not exact.
//
// churn and burst (Phase 4) print their own documents: churn.go, burst.go.
//
// Error causes: eaddrnotavail, eaddrinuse, emfile, enfile, econnrefused,
// econnreset, etimedout (errno, dial timeout or response timeout), epipe,
// eof (closed before the response), bad_response, server_close (idle: the
// response said Connection: close), conn_closed (lowrate: request assigned
// to a connection that had already failed), canceled (interrupted), other.
// Drop causes (idle) are the same plus unexpected_data (the server sent
// something unasked on an idle connection, typically a 408 before closing).
package connclient
