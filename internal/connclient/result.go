package connclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"

	"csbench/internal/connresult"
	"csbench/internal/decimal"
	"csbench/internal/kv"
)

// A run's outcome into the result documents of package connresult, and
// their printing: the one JSON object on stdout, "partial" when
// interrupted.

// newDoc is the beginning of a result document of cfg's mode.
func newDoc(cfg *config, started time.Time) connresult.Doc {
	return connresult.Doc{SchemaVersion: connresult.SchemaVersion, Tool: "connclient", Mode: cfg.mode, Status: "complete",
		Argv: cfg.argv, StartedAt: stamp(started), GoVersion: runtime.Version()}
}

func newCommon(cfg *config, lim [2]uint64, started time.Time) connresult.CommonResult {
	r := connresult.CommonResult{
		Doc:               newDoc(cfg, started),
		Target:            cfg.target.String(),
		HTTP:              cfg.http,
		Linger0:           cfg.linger0,
		TimeoutS:          cfg.timeout.Seconds(),
		ConnectTimeoutS:   cfg.connectTimeout.Seconds(),
		ConnectWorkers:    cfg.workers,
		RlimitNofileSoft:  lim[0],
		RlimitNofileHard:  lim[1],
		ConnectionsTarget: cfg.conns,
		ConnectRateTarget: cfg.rate,
		Errors:            map[string]uint64{},
		StatusCodes:       map[string]uint64{},
	}
	if cfg.source.IsValid() {
		r.Source = ptr(cfg.source.String())
	}
	return r
}

// fillConnect copies the connect phase outcome p into r.
func fillConnect(r *connresult.CommonResult, p *connectPhase) {
	r.ConnectionsAttempted = p.attempted.Load()
	r.ConnectionsEstablished = p.established.Load()
	r.ConnectionsFailed = p.failed.Load()
	if p.complete {
		r.SetupS = ptr(round(p.elapsed.Seconds(), 6))
		if p.elapsed > 0 {
			r.ConnectRateAchieved = ptr(round(float64(r.ConnectionsEstablished)/p.elapsed.Seconds(), 1))
		}
	}
	r.ConnectLatencyP50Ms = connresult.QuantileMs(&p.connectHist, 0.50)
	r.ConnectLatencyP90Ms = connresult.QuantileMs(&p.connectHist, 0.90)
	r.ConnectLatencyP99Ms = connresult.QuantileMs(&p.connectHist, 0.99)
	r.ConnectLatencyMaxMs = connresult.QuantileMs(&p.connectHist, 1)
	r.ConnectLatencyHist = p.connectHist.Dump()
	addCounts(r.Errors, p.errors)
	addStatus(r.StatusCodes, p.status)
	r.Ramp = p.rampResult()
	if p.cfg.tlsCfg != nil {
		r.TLS = &connresult.TLSResult{
			First:              p.tlsFirst,
			Resume:             p.cfg.tlsCfg.ClientSessionCache != nil,
			HandshakesFull:     p.handshakeHist.Count(),
			HandshakesResumed:  p.resumedHist.Count(),
			HandshakeFullP50Ms: connresult.QuantileMs(&p.handshakeHist, 0.50),
			HandshakeFullP99Ms: connresult.QuantileMs(&p.handshakeHist, 0.99),
			HandshakeFullMaxMs: connresult.QuantileMs(&p.handshakeHist, 1),
			HandshakeResumeP50: connresult.QuantileMs(&p.resumedHist, 0.50),
			HandshakeResumeP99: connresult.QuantileMs(&p.resumedHist, 0.99),
			HandshakeResumeMax: connresult.QuantileMs(&p.resumedHist, 1),
		}
	}
}

// rampResult is the ramp of p.
func (p *connectPhase) rampResult() *connresult.RampResult {
	r := &connresult.RampResult{
		Pace:                  p.cfg.pace,
		ConnectSlowMs:         round(float64(p.cfg.slow)/float64(time.Millisecond), 3),
		ConnectRetriesMax:     p.cfg.retries,
		RampMaxS:              round(p.cfg.rampMax.Seconds(), 3),
		BoundReached:          p.boundReached,
		RatePacedMin:          round(p.paceMin, 1),
		RatePacedMax:          round(p.paceMax, 1),
		PaceCuts:              p.pace.Cuts,
		Retries:               p.retries.Load(),
		ConnectionsRetried:    p.retried,
		EstablishedAfterRetry: p.afterRetry,
		ConnectsSlow:          p.slow,
		FirstAttempt: connresult.FirstAttempt{
			Established:         p.firstEstablished,
			ConnectTimeouts:     p.firstTimeouts,
			ResponseTimeouts:    p.firstRespTimeouts,
			ConnectsSlow:        p.firstSlow,
			Errors:              map[string]uint64{},
			ConnectLatencyP50Ms: connresult.QuantileMs(&p.firstHist, 0.50),
			ConnectLatencyP90Ms: connresult.QuantileMs(&p.firstHist, 0.90),
			ConnectLatencyP99Ms: connresult.QuantileMs(&p.firstHist, 0.99),
			ConnectLatencyMaxMs: connresult.QuantileMs(&p.firstHist, 1),
			ConnectLatencyHist:  p.firstHist.Dump(),
		},
	}
	addCounts(r.FirstAttempt.Errors, p.firstErrors)
	for _, n := range p.firstErrors {
		r.FirstAttempt.Failed += int64(n)
	}
	return r
}

func addCounts(dst, src map[string]uint64) {
	for k, v := range src {
		dst[k] += v
	}
}

func addStatus(dst map[string]uint64, src map[int]uint64) {
	for k, v := range src {
		dst[strconv.Itoa(k)] += v
	}
}

// finish ends a run the same way in every mode: it closes the connections,
// marks an interrupted run partial (common is res's CommonResult), prints
// the one JSON result, and returns ErrPartial when the run was interrupted.
func finish(ctx context.Context, common *connresult.CommonResult, res any, conns []held, stdout, stderr io.Writer) error {
	closeAll(conns)
	return writeDoc(ctx, &common.Status, &common.FinishedAt, res, stdout, stderr)
}

// writeDoc stamps a result document's status ("partial" when ctx ended)
// and finish time, prints it, and returns ErrPartial for an interrupted run.
func writeDoc(ctx context.Context, status, finishedAt *string, doc any, stdout, stderr io.Writer) error {
	if ctx.Err() != nil {
		*status = "partial"
	}
	*finishedAt = stamp(time.Now())
	if err := writeResult(stdout, doc); err != nil {
		fmt.Fprintf(stderr, "error: writing result: %v\n", err)
		return err
	}
	if *status == "partial" {
		fmt.Fprintln(stderr, "error: interrupted; partial result printed")
		return ErrPartial
	}
	return nil
}

// scheduleElapsed is how long a schedule ran: from its start to the last
// completion, at least its duration; until now when it was interrupted.
func scheduleElapsed(ctx context.Context, start, lastDone time.Time, duration time.Duration) time.Duration {
	if ctx.Err() != nil {
		return time.Since(start)
	}
	return max(lastDone.Sub(start), duration)
}

func writeResult(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func ptr[T any](v T) *T { return &v }

var round = decimal.Round

// formatCauses renders counts as "a=1 b=2" in key order, for progress lines.
func formatCauses(m map[string]uint64) string {
	var b []byte
	for i, k := range kv.SortedKeys(m) {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendUint(b, m[k], 10)
	}
	return string(b)
}
