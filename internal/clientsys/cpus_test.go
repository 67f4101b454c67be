package clientsys

import (
	"runtime"
	"testing"
	"time"
)

func TestParseCPUList(t *testing.T) {
	got, err := parseCPUList("0-2,5")
	if err != nil || len(got) != 4 || !got[0] || !got[2] || !got[5] || got[3] {
		t.Errorf("0-2,5: %v %v", got, err)
	}
	for _, bad := range []string{"", "a", "3-1", "1,,2"} {
		if _, err := parseCPUList(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A CPU kept busy by this test reads busy: the window over a busy loop on
// every CPU the process may use is mostly busy, and a share from 0 to 1.
func TestCPUWindowSeesABusyCPU(t *testing.T) {
	var w CPUWindow
	w.Begin()
	if w.err != nil {
		t.Skip("no /proc/stat here:", w.err)
	}
	done := make(chan struct{})
	for i := 0; i < runtime.GOMAXPROCS(0); i++ {
		go func() {
			x := 0
			for {
				select {
				case <-done:
					return
				default:
					x++
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	close(done)
	share, ok := w.End()
	if !ok || share < 0.5 || share > 1 {
		t.Errorf("busy share %v (ok %v) over a busy loop on every allowed CPU", share, ok)
	}
	// This process's own share: some of it (how much depends on what else
	// runs on this shared machine), never more than the CPUs' busy share.
	if own, ok := w.Own(); !ok || own <= 0 || own > share+0.05 {
		t.Errorf("own share %v (ok %v) over its own busy loops, the CPUs' %v", own, ok, share)
	}
}

// A process that sleeps through the window used next to none of it,
// however busy its CPUs were.
func TestCPUWindowOwnIdle(t *testing.T) {
	var w CPUWindow
	w.Begin()
	if w.err != nil {
		t.Skip("no /proc/stat here:", w.err)
	}
	time.Sleep(200 * time.Millisecond)
	w.End()
	if own, ok := w.Own(); !ok || own > 0.2 {
		t.Errorf("own share %v (ok %v) of a sleeping process", own, ok)
	}
}
