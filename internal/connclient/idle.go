package connclient

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"syscall"
	"time"
)

// runIdle opens the connections, holds them, checks which are still alive,
// and prints the result.
func runIdle(ctx context.Context, cfg *config, lim [2]uint64, stdout, stderr io.Writer) error {
	started := time.Now()
	res := IdleResult{
		CommonResult: newCommon(cfg, lim, started),
		HoldS:        cfg.hold.Seconds(),
		Drops:        map[string]uint64{},
	}
	p := newConnectPhase(cfg, true)
	p.run(ctx, stderr)
	res.fillConnect(p)
	res.RequestP50Ms = quantileMs(&p.requestHist, 0.50)
	res.RequestP99Ms = quantileMs(&p.requestHist, 0.99)
	res.RequestMaxMs = quantileMs(&p.requestHist, 1)
	res.RequestsTotal = p.requestHist.Count()
	res.RequestHist = p.requestHist.Dump()

	// From here on p.conns is only touched by this goroutine: holding a
	// connection costs a slice entry, no goroutine and no buffer.
	conns := p.conns
	alive := conns // the live prefix; dropped connections are removed
	if p.complete {
		holdStart := time.Now()
		writeEvent(stderr, Event{Event: EventHolding, Established: int64(len(conns)), Target: cfg.conns, Failed: p.failed.Load()})
		end := time.NewTimer(cfg.hold)
		tick := time.NewTicker(cfg.progress)
		hold := true
		for hold {
			select {
			case <-ctx.Done():
				hold = false
			case <-end.C:
				hold = false
			case <-tick.C:
				alive = checkAlive(alive, res.Drops)
				if len(alive) < len(conns) && res.FirstDropS == nil {
					res.FirstDropS = ptr(round(time.Since(holdStart).Seconds(), 3))
				}
				fmt.Fprintf(stderr, "hold elapsed=%.0fs/%v alive=%d/%d\n",
					time.Since(holdStart).Seconds(), cfg.hold, len(alive), len(conns))
			}
		}
		tick.Stop()
		end.Stop()
		res.HoldElapsedS = ptr(round(time.Since(holdStart).Seconds(), 3))
		// Also after an interruption: then it counts the connections alive
		// at the time of the stop.
		alive = checkAlive(alive, res.Drops)
		if len(alive) < len(conns) && res.FirstDropS == nil {
			res.FirstDropS = ptr(round(time.Since(holdStart).Seconds(), 3))
		}
		res.ConnectionsAliveEnd = ptr(len(alive))
	}
	res.ClientRSSMB = rssMB()
	res.ClientGoroutines = runtime.NumGoroutine()
	return finish(ctx, &res.CommonResult, &res, conns, stdout, stderr)
}

// checkAlive peeks at every connection in live without blocking and returns
// the ones still open, reordered; the others are counted in drops by cause.
// Dropped connections stay in the caller's full slice and are closed at the
// end with the rest.
func checkAlive(live []held, drops map[string]uint64) []held {
	for i := 0; i < len(live); {
		if cause := peek(live[i]); cause != "" {
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
		return "unexpected_data"
	}
}
