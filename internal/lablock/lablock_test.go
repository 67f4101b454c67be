package lablock

import (
	"os"
	"strings"
	"testing"
)

func TestAllOrNoneAndHolders(t *testing.T) {
	dir := t.TempDir()
	a, busy, err := TryAll(dir, []string{"netns-x", "port-8080"})
	if err != nil || a == nil || busy != "" {
		t.Fatalf("first: %v %q %v", a, busy, err)
	}
	if _, err := a.Record(Holder{PID: os.Getpid(), Runner: "r.sh", Started: "T"}); err != nil {
		t.Fatal(err)
	}
	// A second run wanting one of them gets none, and the holder named.
	b, busy, err := TryAll(dir, []string{"port-9090", "port-8080"})
	if err != nil || b != nil || busy != "port-8080" {
		t.Fatalf("second: %v %q %v", b, busy, err)
	}
	if !Busy(dir, "port-8080") || Busy(dir, "port-9090") {
		t.Error("Busy disagrees with the locks held")
	}
	if got := CurrentHolder(dir, "port-8080").Text(); !strings.Contains(got, "(r.sh, started T)") {
		t.Errorf("holder: %s", got)
	}
	a.Forget(os.Getpid())
	a.Release()
	// A holder file left by a run that is gone: the next run takes it over.
	os.WriteFile(dir+"/csb-port-8080.0.holder", []byte("pid=999999999\nrunner=killed.sh\nstarted=T0\n"), 0o644)
	c, busy, err := TryAll(dir, []string{"port-8080"})
	if err != nil || c == nil {
		t.Fatalf("after release: %q %v", busy, err)
	}
	taken, err := c.Record(Holder{PID: os.Getpid(), Runner: "next.sh"})
	if err != nil || len(taken) != 1 || !strings.Contains(taken[0], "run PID 999999999 (killed.sh, started T0)") {
		t.Errorf("taken over: %v %v", taken, err)
	}
	c.Release()
	if (*Holder)(nil).Text() == "" {
		t.Error("an unknown holder has no text")
	}
}
