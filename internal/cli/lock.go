package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"csbench/internal/lablock"
)

const lockUsage = `Usage: csb lock -pid PID [-runner TEXT] [-started TIME] [-user NAME] [-wait SECONDS] KEY...
       csb lock -check [-not-pid PID] KEY
       csb lock -dir

Holds one run's locks, every KEY's or none, for as long as process PID
lives (the runner; the locks are released within 200 ms of its end, however
it ends, and at once on SIGTERM, the runner letting go). Every account on the machine sees them: Dir/csb-KEY.lock in a
sticky directory (/run/lock, else /tmp; -dir prints it), taken with flock,
each with a holder file naming the run. Prints on stdout
  taken-over KEY TEXT   a lock a run that is gone left (now this run's)
  locked                every lock is held (then it waits for PID to end)
or, when another run holds one (exit 7):
  busy KEY TEXT         TEXT names that run: "run PID 1 (runner, started T)"
With -wait it waits up to SECONDS for the locks, saying on stderr every
10 s how long it has waited, and beside each lock a wait file
(csb-KEY.wait.PID) while it waits. -check prints the holder of KEY and
exits 0 when another run (not -not-pid) holds it, else exits 1.
`

func runLock(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lock", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	pid := fs.Int("pid", 0, "")
	runner := fs.String("runner", "", "")
	started := fs.String("started", time.Now().UTC().Format(time.RFC3339), "")
	user := fs.String("user", os.Getenv("USER"), "")
	wait := fs.Int("wait", 0, "")
	check := fs.Bool("check", false, "")
	notPID := fs.Int("not-pid", 0, "")
	printDir := fs.Bool("dir", false, "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: lock: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, lockUsage)
		return nil
	}
	dir, err := lablock.Dir()
	if err != nil {
		return err
	}
	keys := fs.Args()
	switch {
	case *printDir:
		_, err := fmt.Fprintln(stdout, dir)
		return err
	case *check:
		if len(keys) != 1 {
			return fmt.Errorf("%w: lock -check takes one KEY", errUsage)
		}
		h := lablock.CurrentHolder(dir, keys[0])
		if !lablock.Busy(dir, keys[0]) || (h != nil && h.PID == *notPID && *notPID != 0) {
			return exitCodeError(1)
		}
		_, err := fmt.Fprintln(stdout, h.Text())
		return err
	case *pid <= 0 || len(keys) == 0:
		return fmt.Errorf("%w: lock needs -pid PID and at least one KEY", errUsage)
	}
	for _, k := range keys {
		if k == "" || k != filepath.Base(k) || k[0] == '.' {
			return fmt.Errorf("%w: lock: key %q is not a file name", errUsage, k)
		}
	}
	start := time.Now()
	var waitFiles []string
	defer func() {
		for _, f := range waitFiles {
			os.Remove(f)
		}
	}()
	var held *lablock.Held
	for next := time.Duration(0); ; {
		h, busy, err := lablock.TryAll(dir, keys)
		if err != nil {
			return err
		}
		if h != nil {
			held = h
			break
		}
		waited := time.Since(start)
		holder := lablock.CurrentHolder(dir, busy).Text()
		if *wait <= 0 || waited >= time.Duration(*wait)*time.Second {
			fmt.Fprintf(stdout, "busy %s %s\n", busy, holder)
			return exitCodeError(7)
		}
		if waitFiles == nil {
			for _, k := range keys {
				f := filepath.Join(dir, "csb-"+k+".wait."+strconv.Itoa(*pid))
				if os.WriteFile(f, nil, 0o644) == nil {
					waitFiles = append(waitFiles, f)
				}
			}
		}
		if waited >= next {
			fmt.Fprintf(stderr, "waiting for lab %s, in use by %s: %.0f s of at most %d s\n", busy, holder, waited.Seconds(), *wait)
			next += 10 * time.Second
		}
		if !lablock.Alive(*pid) {
			return exitCodeError(1)
		}
		time.Sleep(time.Second)
	}
	defer held.Release()
	taken, err := held.Record(lablock.Holder{PID: *pid, Runner: *runner, Started: *started, User: *user})
	if err != nil {
		return err
	}
	for _, t := range taken {
		fmt.Fprintf(stdout, "taken-over %s\n", t)
	}
	if w := time.Since(start); w >= time.Second {
		fmt.Fprintf(stdout, "waited %.0f\n", w.Seconds())
	}
	fmt.Fprintln(stdout, "locked")
	if f, ok := stdout.(*os.File); ok {
		f.Close()
	}
	for _, f := range waitFiles {
		os.Remove(f)
	}
	waitFiles = nil
	// SIGTERM is the runner letting go at its end (lib/lock.sh
	// csb_lab_unlock): the holder files go first, then the locks.
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for lablock.Alive(*pid) {
		select {
		case <-term:
			held.Forget(*pid)
			return nil
		case <-tick.C:
		}
	}
	held.Forget(*pid)
	return nil
}
