// Package connclient implements the connclient command: a TCP/HTTP client
// for Phase 3 (C10K) that opens and holds many keep-alive connections
// (idle) or drives an open-model request rate over many connections
// (lowrate), which wrk and oha cannot do, up to rates past a one-core
// server's knee (the epoll engine).
//
// # Connections
//
// Connections are opened by a pool of -workers goroutines. With -pace
// fixed the connects are paced at -rate connects/s (connect i is due at
// start + i/rate); with -pace aimd (the default) the ramp paces itself to
// what the server accepts, from -rate down: every 100 ms, when an attempt
// (connect, TLS handshake, first request) begun after the last cut timed
// out, or took -connect-slow (1 s, a SYN retransmitted) or longer with a
// retransmission on it (TCP_INFO), or has been under way 3 x
// -connect-slow, the rate is halved (to no less than max(1, rate/100));
// while attempts complete within -connect-slow it grows by rate/20 per
// second, up to -rate (ramppace.go). An attempt that timed out (no answer
// to the connect, the handshake or the first request) is made again, at
// most -connect-retries times per connection; no attempt starts after
// -ramp-max. A connection is a
// net.TCPConn dialed with TCP keep-alive probes off; with -source it is
// bound to that IP with IP_BIND_ADDRESS_NO_PORT, with -linger0 it has
// SO_LINGER=0. HTTP/1.1 is spoken directly on the connection (a precomputed
// GET and a minimal response parser, no net/http Transport), so every
// request goes on the connection it was assigned to, and a request/response
// allocates nothing.
//
// In idle mode each connection carries one GET /healthz; once answered it
// is kept as a slice entry only (no goroutine, no buffer).
// With -http 2 that GET is HTTP/2 (package h2wire): h2 by ALPN over
// TLS (only h2 offered), h2c with prior knowledge in cleartext; the
// connection writes the preface, a SETTINGS frame (HEADER_TABLE_SIZE 0:
// no HPACK dynamic table; push off) and a HEADERS frame on stream 1
// (bytes built once per process), and reads frames to
// the end of stream 1's response, decoding only its :status, answering
// the server's SETTINGS and PINGs. A held HTTP/2 connection costs a small
// struct more (a frame not all arrived, between checks). Once a second
// during the hold, and at its end, every connection is checked with a
// non-blocking recv(MSG_PEEK|MSG_DONTWAIT): EAGAIN means alive, 0 bytes
// means the server closed it; over HTTP/2, bytes to read are read then,
// without waiting for more, through one reader shared by every connection:
// SETTINGS and PING are answered (ACK); WINDOW_UPDATE, PRIORITY,
// RST_STREAM (of the closed stream) and unknown frame types are ignored;
// anything else (GOAWAY, a stream's frame) is a drop. So a server's PING waits up to a second for its ACK.
// The hold lasts -hold, or with -hold-file
// until the end time the file gives: processes on several hosts, each
// printing {"event":"holding"} once its connections are open, then hold
// until the one instant a runner writes there once every one holds.
//
// In lowrate mode each connection also carries one GET of -path when it is
// opened (a server's header timeout runs from accept, so an unused new
// connection would be closed before its first scheduled request). Then the
// schedule runs: request i due at start + i/rps. Cleartext runs on the
// event-loop engine (engine.go): the connections' fds are taken out of the
// Go runtime's poller and split over event loops (one per 5,000 requests/s,
// at most one per CPU: GOMAXPROCS; or -loops), each a goroutine locked to its thread that waits in
// epoll_pwait2 (nanosecond timeouts) as a raw syscall, reads and writes
// non-blocking, parses responses incrementally (h1wire.Parser) and
// allocates nothing per request. A due request takes its loop's connection
// idle the longest; when all are busy it waits, counted in
// requests_late_pool_busy. With TLS the goroutine engine runs instead: one
// dispatcher goroutine keeps the schedule (request i on connection i mod
// conns) and wakes the connection's goroutine; a busy connection sends
// late and the wait counts in the latency. That dispatcher sleeps on a
// timerfd (Linux) rather than a Go timer, which would fire up to 1 ms late.
//
// responder is a trivial HTTP/1.1 server (one event loop, a fixed
// response) to measure the client against (package responder); benchrate
// and benchreport compute from the raw files of scripts/engine-bench.sh
// (package enginebench).
//
// # Result
//
// One JSON object on stdout: its fields, units, histograms and error
// causes are described in package connresult (internal/connresult), which
// holds the documents' types, so that a reader imports them without the
// client.
package connclient
