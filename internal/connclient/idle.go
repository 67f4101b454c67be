package connclient

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"csbench/internal/clientsys"
	"csbench/internal/connresult"
	"csbench/internal/h2wire"
)

// runIdle opens the connections, holds them, checks which are still alive,
// and prints the result. With -hold-file the hold lasts until the end time
// the file gives (several processes, on several hosts, end their holds at
// one instant, after every one has opened its connections); without, -hold.
func runIdle(ctx context.Context, cfg *config, lim [2]uint64, stdout, stderr io.Writer) error {
	started := time.Now()
	res := connresult.IdleResult{
		CommonResult: newCommon(cfg, lim, started),
		Drops:        map[string]uint64{},
	}
	if cfg.holdFile == "" {
		res.HoldS = ptr(cfg.hold.Seconds())
	}
	p := newConnectPhase(cfg, true)
	p.run(ctx, stderr)
	fillConnect(&res.CommonResult, p)
	res.RequestP50Ms = connresult.QuantileMs(&p.requestHist, 0.50)
	res.RequestP99Ms = connresult.QuantileMs(&p.requestHist, 0.99)
	res.RequestMaxMs = connresult.QuantileMs(&p.requestHist, 1)
	res.RequestsTotal = p.requestHist.Count()
	res.RequestHist = p.requestHist.Dump()

	// From here on p.conns is only touched by this goroutine: holding a
	// connection costs a slice entry, no goroutine and no buffer.
	conns := p.conns
	var holdErr error
	if p.complete {
		holdErr = hold(ctx, cfg, &res, conns, p.failed.Load(), stderr)
	}
	res.ClientRSSMB = clientsys.RSSMB()
	res.ClientGoroutines = runtime.NumGoroutine()
	if err := finish(ctx, &res.CommonResult, &res, conns, stdout, stderr); err != nil {
		return err
	}
	return holdErr
}

// errHoldFile: -hold-file gave no end time (none within -hold-wait, or not
// a time); the result has been printed, with errors {"hold_file": 1}.
var errHoldFile = errors.New("no hold end from -hold-file")

// hold holds conns, checking them every progress interval, until the end
// of the hold (-hold from its start, or the time in -hold-file) or ctx
// ends, then checks them once more and fills res's hold fields.
func hold(ctx context.Context, cfg *config, res *connresult.IdleResult, conns []held, failed int64, stderr io.Writer) error {
	alive := conns // the live prefix; dropped connections are removed
	holdStart := time.Now()
	res.HoldBeganAtMs = ptr(holdStart.UnixMilli())
	connresult.WriteEvent(stderr, connresult.Event{Event: connresult.EventHolding, Established: int64(len(conns)), Target: cfg.conns, Failed: failed})
	var (
		end    <-chan time.Time // fires at the hold's end, once it is known
		agreed <-chan holdEnd   // the end from -hold-file
		err    error
	)
	if cfg.holdFile == "" {
		t := time.NewTimer(cfg.hold)
		defer t.Stop()
		end = t.C
	} else {
		ch := make(chan holdEnd, 1)
		go func() {
			at, err := waitFileTime(ctx, cfg.holdFile, cfg.holdWait, "-hold-file", "end time", "-hold-wait")
			ch <- holdEnd{at, err}
		}()
		agreed = ch
	}
	tick := time.NewTicker(cfg.progress)
	defer tick.Stop()
	var h2 *h2wire.Hold // answers the servers of HTTP/2 connections
	if cfg.http == httpV2 {
		h2 = h2wire.NewHold()
	}
	dropped := func() {
		if len(alive) < len(conns) && res.FirstDropS == nil {
			res.FirstDropS = ptr(round(time.Since(holdStart).Seconds(), 3))
		}
	}
	for holding := true; holding; {
		select {
		case <-ctx.Done():
			holding = false
		case e := <-agreed:
			agreed = nil
			if e.err != nil {
				if ctx.Err() == nil {
					fmt.Fprintf(stderr, "error: %v\n", e.err)
					res.Errors["hold_file"]++
					err = errHoldFile
				}
				holding = false
				break
			}
			res.HoldEndAgreedAtMs = ptr(e.at.UnixMilli())
			res.HoldS = ptr(round(e.at.Sub(holdStart).Seconds(), 3))
			t := time.NewTimer(time.Until(e.at)) // at once if the end has passed
			defer t.Stop()
			end = t.C
		case <-end:
			holding = false
		case <-tick.C:
			alive = checkAlive(alive, res.Drops, h2)
			dropped()
			fmt.Fprintf(stderr, "hold elapsed=%.0fs/%s alive=%d/%d\n",
				time.Since(holdStart).Seconds(), holdPlan(cfg, res), len(alive), len(conns))
		}
	}
	ended := time.Now()
	res.HoldEndedAtMs = ptr(ended.UnixMilli())
	res.HoldElapsedS = ptr(round(ended.Sub(holdStart).Seconds(), 3))
	// Also after an interruption: then it counts the connections alive
	// at the time of the stop.
	alive = checkAlive(alive, res.Drops, h2)
	dropped()
	res.ConnectionsAliveEnd = ptr(len(alive))
	return err
}

// holdEnd is what waiting for -hold-file gave.
type holdEnd struct {
	at  time.Time
	err error
}

// holdPlan is the hold's length for the progress line: -hold, the time to
// the end in -hold-file, or "?" while the file has not come.
func holdPlan(cfg *config, res *connresult.IdleResult) string {
	switch {
	case cfg.holdFile == "":
		return cfg.hold.String()
	case res.HoldS != nil:
		return strconv.FormatFloat(*res.HoldS, 'f', 0, 64) + "s"
	}
	return "?"
}

// checkAlive peeks at every connection in live without blocking and returns
// the ones still open, reordered; the others are counted in drops by cause.
// Dropped connections stay in the caller's full slice and are closed at the
// end with the rest. An HTTP/2 connection's server may speak unasked: what
// it sent h2 reads and answers (h2wire.Hold.Serve), and only what h2 does not
// accept (a GOAWAY, a frame of a stream, the connection's end) is a drop.
func checkAlive(live []held, drops map[string]uint64, h2 *h2wire.Hold) []held {
	for i := 0; i < len(live); {
		cause := peek(live[i])
		if cause == causeUnexpected && live[i].h2 != nil {
			h := live[i]
			cause = Classify(h2.Serve(h.io, h.h2, func() bool { return peek(h) != "" }))
		}
		if cause != "" {
			drops[cause]++
			live[i], live[len(live)-1] = live[len(live)-1], live[i]
			live = live[:len(live)-1]
			continue
		}
		i++
	}
	return live
}

// peek returns "" when h is open with nothing to read (an idle keep-alive
// connection), else why it is not: "eof" (the server closed it),
// "unexpected_data" (the server sent something unasked, typically a 408
// before closing), or an error cause such as "econnreset".
func peek(h held) string {
	var (
		buf  [1]byte
		n    int
		serr error
	)
	err := h.rc.Read(func(fd uintptr) bool {
		n, _, serr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait for readability
	})
	switch {
	case err != nil:
		return Classify(err)
	case serr == syscall.EAGAIN:
		return ""
	case serr != nil:
		return Classify(serr)
	case n == 0:
		return causeEOF
	default:
		return causeUnexpected
	}
}

// checkHoldFile checks -hold-file and -hold-wait (idle).
func checkHoldFile(fs *flag.FlagSet, cfg *config) error {
	if cfg.holdFile == "" {
		if isSet(fs, "hold-wait") {
			return usageErrorf("-hold-wait needs -hold-file")
		}
		return nil
	}
	if isSet(fs, "hold") {
		return usageErrorf("-hold and -hold-file exclude each other: with -hold-file the hold ends at the time in the file")
	}
	if cfg.holdWait <= 0 {
		return usageErrorf("-hold-wait %v must be positive", cfg.holdWait)
	}
	return nil
}
