// Package connresult is what a connclient run writes and what its readers
// read: the result document of each mode (idle and lowrate for Phase 3,
// churn and burst for Phase 4; result.go), the log-linear histograms the
// documents carry so that several processes merge exactly (hist.go), and
// the event lines connclient prints on stderr for a runner to wait on
// (events.go). The summarizers (phase3, phase4, capacity, csb's progress
// lines) import this package, never the client itself
// (internal/connclient) with its engines and wire code.
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
//	target, http ("1.1" | "2": -http; absent from results written before it
//	existed, all HTTP/1.1), source (null: none), linger0, timeout_s,
//	connect_timeout_s (-connect-timeout: the bound of an attempt's connect,
//	handshake and first response), connect_workers,
//	rlimit_nofile_soft, rlimit_nofile_hard (after raising the soft limit),
//	connections_target, connect_rate_target_per_s,
//	connections_attempted, connections_established, connections_failed,
//	setup_s (first connect to last connection done; null if interrupted),
//	connect_rate_achieved_per_s,
//	connect_latency_{p50,p90,p99,max}_ms (TCP handshake, every connect that succeeded),
//	connect_latency_histogram (the histogram behind them, see below),
//	(the connection figures are the final outcome, retries included)
//	ramp (null before it existed): pace ("aimd"|"fixed"), connect_slow_ms,
//	connect_retries_max, ramp_max_s, bound_reached (the ramp stopped at
//	ramp_max_s with work left: connections not attempted, retries not
//	made), rate_paced_{min,max}_per_s, pace_cuts, retries (attempts after
//	a first), connections_retried, established_after_retry, connects_slow
//	(every attempt), first_attempt {established, failed, connect_timeouts,
//	response_timeouts, connects_slow, errors {cause: count},
//	connect_latency_{p50,p90,p99,max}_ms, connect_latency_histogram} (the
//	ramp as it would have been without retries),
//	connections_alive_end (idle: at the end of the hold; lowrate: at the end of the run),
//	errors {cause: count}, status_codes {"200": count} (every response read,
//	the one that opened each connection included),
//	client_rss_mb (VmRSS; idle: end of hold, lowrate: mid-schedule),
//	client_goroutines (sampled with client_rss_mb)
//
// idle:
//
//	hold_s (-hold, or with -hold-file from the hold's start to the end in
//	the file; null: no end came), hold_elapsed_s,
//	hold_began_at_ms, hold_ended_at_ms (Unix ms: every connection open and
//	primed; the last check begun), hold_end_agreed_at_ms (the end in
//	-hold-file; null without), first_drop_s (null: no drop seen),
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
//	latency_histogram, service_latency_histogram, sender_lag_histogram,
//	engine ("epoll" | "goroutines"), event_loops, event_loops_cpu_s (the
//	loops' threads' CPU time), requests_late_pool_busy (a due request found
//	every connection of its loop busy), engine_lag_{p50,p99,max}_ms and
//	engine_lag_histogram (the sender lag of the other requests: the
//	engine's own lateness), connection_drops {cause: count} (connections
//	that left the pool without failing a request): null with the goroutine
//	engine, which does not measure them; drain_s (-drain; null: no bound);
//	schedule_tenths {due_ok, due_latency_sum_us, done_ok: ten slices of
//	duration_s each; done_ok_after} (Tenths: the 2xx answers by the slice
//	their request was due in, with their latencies from the due time
//	summed, and by the slice they arrived in, those after the schedule
//	apart; sums that merge across processes by adding)
//
// A histogram is {unit "us", sub_bits, max_bits, count, min_us, max_us,
// buckets [[index, count], ...]} (non-empty buckets only, HistDump): every
// process uses the same buckets, so the histograms of several processes
// merge exactly (MergeDumps) and the merged percentiles are those one
// process holding every sample would have printed. The fields are an
// addition within schema version 1: results written before them have none,
// and a reader says its percentiles of several processes are not exact.
//
// churn and burst (Phase 4) print their own documents: ChurnResult and
// BurstResult, whose fields say what they hold.
//
// Error causes: eaddrnotavail, eaddrinuse, emfile, enfile, econnrefused,
// econnreset, etimedout (errno, dial timeout or response timeout), epipe,
// eof (closed before the response), bad_response, server_close (idle: the
// response said Connection: close), conn_closed (lowrate: request assigned
// to a connection that had already failed, or, epoll engine, due when its
// loop had no connection left), status (lowrate: a whole response whose
// status is not 2xx; its code is in status_codes), canceled (interrupted),
// hold_file (idle: -hold-file gave no end time; exit 1), start_file
// (lowrate: -start-file gave no start time), other; with -http 2 (idle)
// also alpn_not_h2 (TLS: the server refused h2 or chose another protocol),
// http1_answer (cleartext: it answered the preface in HTTP/1), goaway (a
// GOAWAY before the response's end), rst_stream (RST_STREAM on the
// request's stream). Drop causes (idle, and lowrate's connection_drops)
// are the same plus unexpected_data (the server sent something unasked on
// an idle connection, typically a 408 before closing; over HTTP/2 a
// stream's frame); over HTTP/2 a GOAWAY during the hold is the drop
// goaway. In connection_drops server_close is a response that said
// Connection: close.
package connresult
