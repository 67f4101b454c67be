// Package startat runs one command at an agreed wall-clock instant and
// records when it really ran: the part of an N-client run that each client
// host does for itself (`csb start-at`). The controller hands every client
// the same due time and corrects nothing; the hosts' clock offsets are
// recorded beside the timings (run.env) for whoever merges them.
package startat

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"csbench/internal/atomicfile"
)

// Schema names the timing document's format.
const Schema = "csb.timing/v1"

// MaxLate is how far past its due time a command may still be started. A
// start some seconds late (a loaded controller whose launch took longer
// than the lead) is still measured: each tool's own start and end are
// recorded, and several clients' figures are taken over the window they
// all loaded (the cell's overlap). A later one says the controller is too
// slow to hold a cell together: refused, with this error in the raw file.
const MaxLate = 10 * time.Second

// Timing is the document written beside a client's raw output. Times are
// Unix epoch milliseconds of the host's own clock.
type Timing struct {
	Schema  string `json:"schema"`
	DueMS   int64  `json:"due_ms"`
	StartMS int64  `json:"start_ms"`
	EndMS   int64  `json:"end_ms"`
	Exit    int    `json:"exit"`
}

// ErrLate is returned (before anything is started) when the due time is
// already more than MaxLate past.
var ErrLate = errors.New("due time already past")

// Job is one command to start at DueMS.
type Job struct {
	DueMS int64
	Out   string // the timing document's path
	// PIDFile, when set, gets the child's PID once it has started (temp
	// file and rename), so a monitor on the host can follow the tool itself.
	PIDFile string
	Argv    []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	// Signals, when not nil, delivers the signals to forward to the child
	// (SIGINT, SIGTERM); one that arrives before the due time cancels the
	// job: nothing is started and no timing is written.
	Signals <-chan os.Signal
	// Now is the wall clock (time.Now when nil): tests move it.
	Now func() time.Time
}

// Run waits for the due time, runs the command and writes the timing
// document. It returns the child's exit status (128+N when a signal N ended
// it), or an error when the command could not be run at all.
func Run(j Job) (int, error) {
	now := j.Now
	if now == nil {
		now = time.Now
	}
	if len(j.Argv) == 0 {
		return 0, errors.New("no command")
	}
	due := time.UnixMilli(j.DueMS)
	if late := now().Sub(due); late > MaxLate {
		return 0, fmt.Errorf("%w: %d ms ago (at most %d ms late is started)", ErrLate, late.Milliseconds(), MaxLate.Milliseconds())
	}
	if wait := due.Sub(now()); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case s := <-j.Signals:
			t.Stop()
			return 128 + sigNum(s), nil
		}
	}
	cmd := exec.Command(j.Argv[0], j.Argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = j.Stdin, j.Stdout, j.Stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", j.Argv[0], err)
	}
	tm := Timing{Schema: Schema, DueMS: j.DueMS, StartMS: now().UnixMilli()}
	if j.PIDFile != "" {
		if err := atomicfile.Write(j.PIDFile, []byte(fmt.Sprintf("%d\n", cmd.Process.Pid)), 0o644); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return 0, fmt.Errorf("pid file: %w", err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	for waiting := true; waiting; {
		select {
		case werr = <-done:
			waiting = false
		case s := <-j.Signals:
			_ = cmd.Process.Signal(s)
		}
	}
	tm.EndMS = now().UnixMilli()
	tm.Exit = exitStatus(cmd.ProcessState, werr)
	data, err := json.Marshal(tm)
	if err != nil {
		return tm.Exit, err
	}
	if err := atomicfile.Write(j.Out, append(data, '\n'), 0o644); err != nil {
		return tm.Exit, err
	}
	return tm.Exit, nil
}

func sigNum(s os.Signal) int {
	if n, ok := s.(syscall.Signal); ok {
		return int(n)
	}
	return 15
}

// exitStatus is the shell's view of how the child ended: its exit code, or
// 128+N for a signal N.
func exitStatus(ps *os.ProcessState, err error) int {
	if ps == nil {
		return 127
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	if c := ps.ExitCode(); c >= 0 {
		return c
	}
	if err != nil {
		return 1
	}
	return 0
}
