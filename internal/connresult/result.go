package connresult

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"csbench/internal/decimal"
	"csbench/internal/tlscert"
)

// SchemaVersion is the major version of the result document; a reader
// refuses any other (DecodeResult).
const SchemaVersion = 1

// Doc is how every connclient result document begins.
type Doc struct {
	SchemaVersion int      `json:"schema_version"`
	Tool          string   `json:"tool"`
	Mode          string   `json:"mode"`
	Status        string   `json:"status"` // "complete" or "partial"
	Argv          []string `json:"argv"`
	StartedAt     string   `json:"started_at"`
	FinishedAt    string   `json:"finished_at"`
	GoVersion     string   `json:"go_version"`
}

// CommonResult is the result fields shared by both modes. Units are in the names; a value that
// was not measured (for example setup_s of an interrupted connect phase, or
// a percentile of an empty set) is null, never 0.
type CommonResult struct {
	Doc

	Target string `json:"target"`
	// HTTP is the HTTP version spoken, -http: "1.1" or "2" (idle only);
	// empty in results written before it existed (all HTTP/1.1).
	HTTP             string  `json:"http"`
	Source           *string `json:"source"`
	Linger0          bool    `json:"linger0"`
	TimeoutS         float64 `json:"timeout_s"`
	ConnectTimeoutS  float64 `json:"connect_timeout_s"`
	ConnectWorkers   int     `json:"connect_workers"`
	RlimitNofileSoft uint64  `json:"rlimit_nofile_soft"`
	RlimitNofileHard uint64  `json:"rlimit_nofile_hard"`

	ConnectionsTarget      int      `json:"connections_target"`
	ConnectRateTarget      int      `json:"connect_rate_target_per_s"`
	ConnectionsAttempted   int64    `json:"connections_attempted"`
	ConnectionsEstablished int64    `json:"connections_established"`
	ConnectionsFailed      int64    `json:"connections_failed"`
	SetupS                 *float64 `json:"setup_s"`
	ConnectRateAchieved    *float64 `json:"connect_rate_achieved_per_s"`
	ConnectLatencyP50Ms    *float64 `json:"connect_latency_p50_ms"`
	ConnectLatencyP90Ms    *float64 `json:"connect_latency_p90_ms"`
	ConnectLatencyP99Ms    *float64 `json:"connect_latency_p99_ms"`
	ConnectLatencyMaxMs    *float64 `json:"connect_latency_max_ms"`
	ConnectionsAliveEnd    *int     `json:"connections_alive_end"`
	// ConnectLatencyHist is the connect latencies' histogram, for an exact
	// merge across processes (null in results written before it existed).
	ConnectLatencyHist *HistDump `json:"connect_latency_histogram"`

	Errors      map[string]uint64 `json:"errors"`
	StatusCodes map[string]uint64 `json:"status_codes"`

	ClientRSSMB      *float64 `json:"client_rss_mb"`
	ClientGoroutines int      `json:"client_goroutines"`

	// TLS is null for cleartext runs.
	TLS *TLSResult `json:"tls,omitempty"`

	// Ramp is how the connects were paced and retried, and what their
	// first attempts met; null in results written before it existed. The
	// connection fields above are the final outcome, retries included.
	Ramp *RampResult `json:"ramp"`
}

// RampResult is the ramp of the connect phase: its pacing (-pace, the
// controller of connclient's ramppace.go: halve the rate when an attempt
// begun after the last cut timed out or took connect_slow_ms or more; grow by 1/20 of
// the -rate per second while attempts are fast; between 1/100 of it and
// it), its retries (an attempt that timed out, at the connect or waiting
// for the first answer, is made again, at most connect_retries_max times
// per connection, none starting after ramp_max_s), and its first attempts
// beside the final outcome.
type RampResult struct {
	Pace              string  `json:"pace"` // "aimd" or "fixed"
	ConnectSlowMs     float64 `json:"connect_slow_ms"`
	ConnectRetriesMax int     `json:"connect_retries_max"`
	RampMaxS          float64 `json:"ramp_max_s"`
	// BoundReached: the ramp stopped at ramp_max_s with connections not
	// attempted (connections_target - connections_attempted) or retries
	// not made (counted failed, with their last attempt's cause).
	BoundReached bool `json:"bound_reached"`
	// The rates the ramp was paced at, lowest and highest, connects/s
	// (fixed: the -rate), and how many times the controller halved it.
	RatePacedMin float64 `json:"rate_paced_min_per_s"`
	RatePacedMax float64 `json:"rate_paced_max_per_s"`
	PaceCuts     int     `json:"pace_cuts"`
	// Retries is the attempts made after a first one; ConnectionsRetried
	// the connections with at least one; EstablishedAfterRetry those of
	// them established.
	Retries               int64 `json:"retries"`
	ConnectionsRetried    int64 `json:"connections_retried"`
	EstablishedAfterRetry int64 `json:"established_after_retry"`
	// ConnectsSlow is the attempts, first or not, that connected after
	// connect_slow_ms or more (a SYN retransmitted).
	ConnectsSlow int64 `json:"connects_slow"`

	FirstAttempt FirstAttempt `json:"first_attempt"`
}

// FirstAttempt is what the connections' first attempts met: the ramp as it
// would have been without retries.
type FirstAttempt struct {
	Established     int64 `json:"established"`
	Failed          int64 `json:"failed"`
	ConnectTimeouts int64 `json:"connect_timeouts"` // the TCP connect timed out (-timeout)
	// ResponseTimeouts: connected, then no answer to the TLS handshake or
	// the first request within -timeout (the server never took the
	// connection in: the handshake's last ACK dropped on a full accept
	// queue, or a server that does not answer).
	ResponseTimeouts int64             `json:"response_timeouts"`
	ConnectsSlow     int64             `json:"connects_slow"` // connected after connect_slow_ms or more
	Errors           map[string]uint64 `json:"errors"`        // failed, by cause
	// Connect latency of the first attempts that connected.
	ConnectLatencyP50Ms *float64  `json:"connect_latency_p50_ms"`
	ConnectLatencyP90Ms *float64  `json:"connect_latency_p90_ms"`
	ConnectLatencyP99Ms *float64  `json:"connect_latency_p99_ms"`
	ConnectLatencyMaxMs *float64  `json:"connect_latency_max_ms"`
	ConnectLatencyHist  *HistDump `json:"connect_latency_histogram"`
}

// TLSResult is the TLS side of a run with -tls-ca: the first connection's
// negotiated state and the handshakes, full and resumed apart (each timed
// from the established TCP connection to the handshake's end, so the
// connect latencies above stay the TCP connect's alone).
type TLSResult struct {
	First              *TLSState `json:"first"` // null: no handshake completed
	Resume             bool      `json:"resume"`
	HandshakesFull     uint64    `json:"handshakes_full"`
	HandshakesResumed  uint64    `json:"handshakes_resumed"`
	HandshakeFullP50Ms *float64  `json:"handshake_full_p50_ms"`
	HandshakeFullP99Ms *float64  `json:"handshake_full_p99_ms"`
	HandshakeFullMaxMs *float64  `json:"handshake_full_max_ms"`
	HandshakeResumeP50 *float64  `json:"handshake_resumed_p50_ms"`
	HandshakeResumeP99 *float64  `json:"handshake_resumed_p99_ms"`
	HandshakeResumeMax *float64  `json:"handshake_resumed_max_ms"`
}

// IdleResult is the result of connclient idle.
type IdleResult struct {
	CommonResult
	// HoldS is the hold asked: -hold, or with -hold-file from this
	// process's hold start to the end in the file (null: no end came).
	HoldS        *float64 `json:"hold_s"`
	HoldElapsedS *float64 `json:"hold_elapsed_s"`
	// When the hold began (every connection open and primed: the
	// "holding" event) and ended (the last check of the connections
	// began), Unix milliseconds; and with -hold-file the end read from the
	// file, which the hold's end is never before (null without). Null
	// when there was no hold.
	HoldBeganAtMs     *int64            `json:"hold_began_at_ms"`
	HoldEndedAtMs     *int64            `json:"hold_ended_at_ms"`
	HoldEndAgreedAtMs *int64            `json:"hold_end_agreed_at_ms"`
	FirstDropS        *float64          `json:"first_drop_s"` // null: no connection dropped
	Drops             map[string]uint64 `json:"drops"`
	RequestP50Ms      *float64          `json:"request_latency_p50_ms"`
	RequestP99Ms      *float64          `json:"request_latency_p99_ms"`
	RequestMaxMs      *float64          `json:"request_latency_max_ms"`
	RequestsTotal     uint64            `json:"requests_completed"`
	RequestHist       *HistDump         `json:"request_latency_histogram"`
}

// LowrateResult is the result of connclient lowrate.
type LowrateResult struct {
	CommonResult
	Path              string   `json:"path"`
	RPSTarget         int      `json:"rps_target"`
	DurationS         float64  `json:"duration_s"`
	ElapsedS          *float64 `json:"elapsed_s"`
	RequestsScheduled int64    `json:"requests_scheduled"`
	RequestsSent      int64    `json:"requests_sent"`
	RequestsCompleted int64    `json:"requests_completed"`
	RequestsFailed    int64    `json:"requests_failed"`
	RequestsUnsent    int64    `json:"requests_unsent"`
	RPSAchieved       *float64 `json:"rps_achieved"`
	// ScheduleStartedAt is when request 0 was due (RFC 3339 UTC): with
	// -start-file the agreed moment; null when the schedule never started.
	ScheduleStartedAt *string `json:"schedule_started_at"`

	LatencyP50Ms  *float64 `json:"latency_p50_ms"`
	LatencyP90Ms  *float64 `json:"latency_p90_ms"`
	LatencyP99Ms  *float64 `json:"latency_p99_ms"`
	LatencyP999Ms *float64 `json:"latency_p999_ms"`
	LatencyMaxMs  *float64 `json:"latency_max_ms"`

	ServiceLatencyP50Ms  *float64 `json:"service_latency_p50_ms"`
	ServiceLatencyP90Ms  *float64 `json:"service_latency_p90_ms"`
	ServiceLatencyP99Ms  *float64 `json:"service_latency_p99_ms"`
	ServiceLatencyP999Ms *float64 `json:"service_latency_p999_ms"`
	ServiceLatencyMaxMs  *float64 `json:"service_latency_max_ms"`

	SenderLagP50Ms *float64 `json:"sender_lag_p50_ms"`
	SenderLagP99Ms *float64 `json:"sender_lag_p99_ms"`
	SenderLagMaxMs *float64 `json:"sender_lag_max_ms"`

	// The histograms behind the percentiles above, for an exact merge
	// across processes (null in results written before they existed).
	LatencyHist        *HistDump `json:"latency_histogram"`
	ServiceLatencyHist *HistDump `json:"service_latency_histogram"`
	SenderLagHist      *HistDump `json:"sender_lag_histogram"`

	// Engine is what ran the schedule: "epoll" (event loops, cleartext) or
	// "goroutines" (a goroutine per connection: TLS). Empty in results
	// written before the epoll engine; the fields below are null there and
	// with the goroutine engine, which does not measure them.
	Engine     string `json:"engine"`
	EventLoops *int   `json:"event_loops"`
	// EventLoopsCPUS is the CPU time (user + system) of the loops' threads
	// over the schedule: over elapsed_s and event_loops, how busy the
	// client was (near 1: the client, not the server, bound the rate).
	EventLoopsCPUS *float64 `json:"event_loops_cpu_s"`
	// ClientCPUs is the CPU list this process could run on and
	// ClientCPUsBusyPct how busy those CPUs were over the schedule, by
	// every task (/proc/stat): near 100 the client had no CPU to spare,
	// whoever took it. Null when /proc/stat could not be read.
	ClientCPUs        string   `json:"client_cpus"`
	ClientCPUsBusyPct *float64 `json:"client_cpus_busy_pct"`
	// ClientProcessCPUPct is how much of those CPUs' time over the schedule
	// this process used itself (every thread, getrusage): what tells a
	// client that ran out of CPU from one whose CPUs others kept busy.
	// Null in results written before it, or when it could not be read.
	ClientProcessCPUPct *float64 `json:"client_process_cpu_pct,omitempty"`
	// RequestsLatePoolBusy counts the requests that, when due, found every
	// connection of their loop busy and waited for one: the pool was too
	// small for the load, the server was not necessarily slow.
	RequestsLatePoolBusy *int64 `json:"requests_late_pool_busy"`
	// EngineLag* is the sender lag of the other requests, those that found
	// an idle connection when due: the engine's own lateness (its timer's
	// wake-up, its loop's backlog, on a shared CPU the scheduler), without
	// the waits for a connection that sender_lag_* also holds.
	EngineLagP50Ms *float64  `json:"engine_lag_p50_ms"`
	EngineLagP99Ms *float64  `json:"engine_lag_p99_ms"`
	EngineLagMaxMs *float64  `json:"engine_lag_max_ms"`
	EngineLagHist  *HistDump `json:"engine_lag_histogram"`
	// ConnectionDrops counts, by cause, the connections that left the pool
	// without failing a request: closed by the server while idle (eof,
	// unexpected_data, an errno) or after a response that said
	// Connection: close (server_close).
	ConnectionDrops map[string]uint64 `json:"connection_drops"`
	// DrainS is -drain in seconds: requests still waiting for a connection
	// that long after duration_s were not sent (requests_unsent); null: no
	// bound.
	DrainS *float64 `json:"drain_s"`
	// ScheduleTenths is the schedule cut into ten slices of its duration
	// (Tenths: answers by due slice with their latencies, and by the
	// slice they arrived in), for judging a step in steady state; null in
	// results written before it existed or when the schedule never ran.
	ScheduleTenths *Tenths `json:"schedule_tenths"`
}

// Engines of lowrate.
const (
	EngineEpoll      = "epoll"
	EngineGoroutines = "goroutines"
)

// TLSState is a TLS connection's negotiated state as a result shows it.
type TLSState = tlscert.State

// QuantileMs returns the q-quantile of h in milliseconds (µs resolution),
// or nil when h is empty: the figure connclient prints, which a merge of
// several processes' histograms reproduces exactly.
func QuantileMs(h *Histogram, q float64) *float64 {
	if h.Count() == 0 {
		return nil
	}
	v := decimal.Round(h.Quantile(q)/1000, 3)
	return &v
}

// ChurnResult is the result of connclient churn.
type ChurnResult struct {
	Header
	Close             string   `json:"close"`
	Path              string   `json:"path"`
	RateTargetPerS    int      `json:"rate_target_per_s"`
	DurationS         float64  `json:"duration_s"`
	ElapsedS          *float64 `json:"elapsed_s"` // start of schedule to last connection done, at least duration_s
	ConnsScheduled    int64    `json:"connections_scheduled"`
	ConnsDispatched   int64    `json:"connections_dispatched"` // handed to a worker when due
	ConnsNotSent      int64    `json:"connections_not_sent"`   // still waiting for a worker at the cut-off (connclient's lateCutoff)
	ConnsAttempted    int64    `json:"connections_attempted"`
	ConnsEstablished  int64    `json:"connections_established"`
	ConnsCompleted    int64    `json:"connections_completed"` // request answered and connection closed as asked
	ConnsFailed       int64    `json:"connections_failed"`
	RateAchievedPerS  *float64 `json:"rate_achieved_per_s"` // connections_completed / elapsed_s
	FirstFailureS     *float64 `json:"first_failure_s"`     // due time of the first failure, from the start
	FirstAddrNotAvail *float64 `json:"first_eaddrnotavail_s"`

	ScheduleLagP50Ms *float64 `json:"schedule_lag_p50_ms"` // dispatch - due: the scheduler's own accuracy
	ScheduleLagP99Ms *float64 `json:"schedule_lag_p99_ms"`
	ScheduleLagMaxMs *float64 `json:"schedule_lag_max_ms"`

	ConnectLatencyP50Ms *float64 `json:"connect_latency_p50_ms"` // connected - due
	ConnectLatencyP99Ms *float64 `json:"connect_latency_p99_ms"`
	ConnectLatencyMaxMs *float64 `json:"connect_latency_max_ms"`
	LatencyP50Ms        *float64 `json:"latency_p50_ms"` // response read - due
	LatencyP90Ms        *float64 `json:"latency_p90_ms"`
	LatencyP99Ms        *float64 `json:"latency_p99_ms"`
	LatencyMaxMs        *float64 `json:"latency_max_ms"`
	HandshakeP50Ms      *float64 `json:"handshake_p50_ms"` // connected - connect() called
	HandshakeP99Ms      *float64 `json:"handshake_p99_ms"`

	Errors      map[string]uint64 `json:"errors"`
	StatusCodes map[string]uint64 `json:"status_codes"`
	PerSecond   []ChurnSecond     `json:"per_second"` // by due time
	Histograms  map[string]*Dump  `json:"histograms"` // connect, latency (and tls_full, tls_resumed): mergeable
	ClientRSSMB *float64          `json:"client_rss_mb"`
	Goroutines  int               `json:"client_goroutines"` // mid-schedule

	// TLS is null for cleartext runs; with -tls-ca each connection's TLS
	// handshake, full and resumed apart, timed from the established TCP
	// connection (connect_latency and handshake_* stay the TCP connect's;
	// latency, from the due time, includes the TLS handshake).
	TLS *TLSResult `json:"tls,omitempty"`
}

// Header is what every Phase 4 result document starts with.
type Header struct {
	Doc
	Target   string  `json:"target"`
	Source   *string `json:"source"`
	TimeoutS float64 `json:"timeout_s"`
	Workers  int     `json:"workers"`
}

// ChurnSecond is one second of the schedule, by due time.
type ChurnSecond struct {
	T             int    `json:"t_s"`
	Completed     uint64 `json:"completed"`
	Failed        uint64 `json:"failed"`
	AddrNotAvail  uint64 `json:"eaddrnotavail"`
	LatencyMaxMs  uint64 `json:"latency_max_ms"`
	ConnectedLate uint64 `json:"connected_after_1s"` // connected >= 1 s after due
}

// BurstResult is the result of connclient burst.
type BurstResult struct {
	Header
	Path              string            `json:"path"`
	ConnsTarget       int               `json:"connections_target"`
	IssueS            float64           `json:"issue_s"` // first to last connect() call
	ConnsAttempted    int64             `json:"connections_attempted"`
	ConnsEstablished  int64             `json:"connections_established"` // handshake done as the client sees it
	ConnsCompleted    int64             `json:"connections_completed"`   // response and FIN read
	ConnsFailed       int64             `json:"connections_failed"`
	ConnsNeverUp      int64             `json:"connections_never_up"` // no response within timeout_s
	ConnectLatencyP50 *float64          `json:"connect_latency_p50_ms"`
	ConnectLatencyP99 *float64          `json:"connect_latency_p99_ms"`
	ConnectLatencyMax *float64          `json:"connect_latency_max_ms"`
	LatencyP50Ms      *float64          `json:"latency_p50_ms"` // response read - connect() called
	LatencyP90Ms      *float64          `json:"latency_p90_ms"`
	LatencyP99Ms      *float64          `json:"latency_p99_ms"`
	LatencyMaxMs      *float64          `json:"latency_max_ms"`
	Steps             Steps             `json:"latency_steps"`
	Errors            map[string]uint64 `json:"errors"`
	StatusCodes       map[string]uint64 `json:"status_codes"`
	Histograms        map[string]*Dump  `json:"histograms"`
}

// Steps counts completed connections by the SYN retransmission step their
// response latency falls in.
type Steps struct {
	Under1s  uint64 `json:"under_1s"`
	From1s   uint64 `json:"1s_to_3s"`
	From3s   uint64 `json:"3s_to_7s"`
	From7sUp uint64 `json:"7s_and_more"`
}

func (s *Steps) Add(d time.Duration) {
	switch {
	case d < time.Second:
		s.Under1s++
	case d < 3*time.Second:
		s.From1s++
	case d < 7*time.Second:
		s.From3s++
	default:
		s.From7sUp++
	}
}

// Result is one result document as a reader sees it: the common fields and
// those of its mode (Idle or Lowrate, the other nil); a Phase 4 document
// (Churn or Burst) has no Common.
type Result struct {
	Common  *CommonResult
	Idle    *IdleResult
	Lowrate *LowrateResult
	Churn   *ChurnResult
	Burst   *BurstResult
}

// DecodeResult reads a result document; name (the file) is in every error.
// It refuses a schema_version other than SchemaVersion and an unknown mode.
func DecodeResult(name string, b []byte) (*Result, error) {
	var head struct {
		SchemaVersion *int   `json:"schema_version"`
		Tool          string `json:"tool"`
		Mode          string `json:"mode"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: not connclient's JSON: %w", name, err)
	}
	if head.Tool != "connclient" || head.SchemaVersion == nil {
		return nil, fmt.Errorf("%s: not connclient's JSON (no tool \"connclient\" and schema_version)", name)
	}
	if *head.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: connclient schema_version %d, this reader knows version %d: read it with the csb of the commit that wrote it", name, *head.SchemaVersion, SchemaVersion)
	}
	var r Result
	var err error
	switch head.Mode {
	case "idle":
		r.Idle = &IdleResult{}
		err = json.Unmarshal(b, r.Idle)
		r.Common = &r.Idle.CommonResult
	case "lowrate":
		r.Lowrate = &LowrateResult{}
		err = json.Unmarshal(b, r.Lowrate)
		r.Common = &r.Lowrate.CommonResult
	case "churn":
		r.Churn = &ChurnResult{}
		err = strictUnmarshal(b, r.Churn)
	case "burst":
		r.Burst = &BurstResult{}
		err = strictUnmarshal(b, r.Burst)
	default:
		return nil, fmt.Errorf("%s: connclient mode %q: want idle, lowrate, churn or burst", name, head.Mode)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not connclient's JSON: %w", name, err)
	}
	return &r, nil
}

// strictUnmarshal decodes b into v and refuses unknown fields.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
