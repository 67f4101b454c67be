package server

import (
	"context"
	"os"
	"os/signal"
)

// A SignalError is the cause of a context canceled by NotifyContext.
type SignalError struct{ Signal os.Signal }

func (e SignalError) Error() string { return "signal: " + e.Signal.String() }

// NotifyContext is signal.NotifyContext that records which signal arrived:
// context.Cause of the returned context is a SignalError. After the first
// signal it stops catching, so a second Ctrl-C has its default effect and
// kills a shutdown that hangs.
func NotifyContext(parent context.Context, sigs ...os.Signal) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(SignalError{s})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}
