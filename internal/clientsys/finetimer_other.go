//go:build !linux

package connclient

import (
	"errors"
	"time"
)

// fineTimer exists only on Linux; elsewhere the Sleeper uses a time.Timer.
type fineTimer struct{}

func newFineTimer() (*fineTimer, error)        { return nil, errors.New("no timerfd") }
func (t *fineTimer) sleep(time.Duration) error { return errors.New("no timerfd") }
func (t *fineTimer) interrupt()                {}
func (t *fineTimer) close()                    {}
