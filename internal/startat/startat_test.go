package startat

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func readTiming(t *testing.T, path string) Timing {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tm Timing
	if err := json.Unmarshal(data, &tm); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return tm
}

func TestRunWaitsForDueAndRecords(t *testing.T) {
	out := filepath.Join(t.TempDir(), "c.timing.json")
	due := time.Now().Add(150 * time.Millisecond).UnixMilli()
	code, err := Run(Job{DueMS: due, Out: out, Argv: []string{"sh", "-c", "exit 3"}})
	if err != nil || code != 3 {
		t.Fatalf("Run = %d, %v; want 3, nil", code, err)
	}
	tm := readTiming(t, out)
	if tm.Schema != Schema || tm.DueMS != due || tm.Exit != 3 {
		t.Fatalf("timing %+v", tm)
	}
	if tm.StartMS < due || tm.StartMS > due+100 || tm.EndMS < tm.StartMS {
		t.Fatalf("start %d end %d for due %d", tm.StartMS, tm.EndMS, due)
	}
}

func TestRunRefusesLate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "late.json")
	due := time.Now().Add(-MaxLate - 2*time.Second).UnixMilli()
	_, err := Run(Job{DueMS: due, Out: out, Argv: []string{"true"}})
	if !errors.Is(err, ErrLate) {
		t.Fatalf("err = %v, want ErrLate", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a timing file was written for a refused job")
	}
	// Less than MaxLate past (a loaded controller's launch): started at once.
	due = time.Now().Add(-3 * time.Second).UnixMilli()
	if code, err := Run(Job{DueMS: due, Out: out, Argv: []string{"true"}}); err != nil || code != 0 {
		t.Fatalf("Run = %d, %v", code, err)
	}
}

func TestRunForwardsSignals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sig.json")
	sigs := make(chan os.Signal, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		sigs <- syscall.SIGTERM
	}()
	code, err := Run(Job{DueMS: time.Now().UnixMilli(), Out: out, Argv: []string{"sleep", "10"}, Signals: sigs})
	if err != nil || code != 128+15 {
		t.Fatalf("Run = %d, %v; want 143", code, err)
	}
	if tm := readTiming(t, out); tm.Exit != 143 {
		t.Fatalf("timing %+v", tm)
	}
}

func TestSignalBeforeDueStartsNothing(t *testing.T) {
	out := filepath.Join(t.TempDir(), "early.json")
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGINT
	code, err := Run(Job{DueMS: time.Now().Add(5 * time.Second).UnixMilli(), Out: out, Argv: []string{"true"}, Signals: sigs})
	if err != nil || code != 130 {
		t.Fatalf("Run = %d, %v; want 130", code, err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a timing file was written for a job never started")
	}
}
