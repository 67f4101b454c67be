package loadplan

import (
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		total int64
		n     int
		want  []int64
	}{{64, 1, []int64{64}}, {65, 2, []int64{33, 32}}, {10, 3, []int64{4, 3, 3}}, {2, 2, []int64{1, 1}}} {
		got := Split(c.total, c.n)
		var sum int64
		for i, v := range got {
			sum += v
			if v != c.want[i] {
				t.Errorf("Split(%d, %d) = %v, want %v", c.total, c.n, got, c.want)
				break
			}
		}
		if sum != c.total {
			t.Errorf("Split(%d, %d) sums to %d", c.total, c.n, sum)
		}
	}
}

func TestThreads(t *testing.T) {
	for _, c := range []struct {
		want, cpus int
		conns      int64
		got        int
	}{{2, 1, 64, 2}, {4, 1, 2, 2}, {0, 2, 64, 2}, {0, 0, 64, 1}, {0, 8, 3, 3}} {
		if g := Threads(c.want, c.cpus, c.conns); g != c.got {
			t.Errorf("Threads(%d, %d, %d) = %d, want %d", c.want, c.cpus, c.conns, g, c.got)
		}
	}
}

func TestComputeOneHostIsTheCaseOfOne(t *testing.T) {
	p := Compute(64, 2, []Host{{Label: "client", CPUs: 1, FDHard: 20000}})
	if !p.OK || len(p.Shares) != 1 || p.Shares[0].Connections != 64 || p.Shares[0].Threads != 2 {
		t.Fatalf("one host: %+v", p)
	}
}

func TestComputeRefusals(t *testing.T) {
	p := Compute(1, 2, []Host{{Label: "client1"}, {Label: "client2"}})
	if p.OK || p.Code != CodeSplit || !strings.Contains(p.Refusal, "cannot be split across 2 client hosts") {
		t.Errorf("split: %+v", p)
	}
	p = Compute(2000, 0, []Host{{Label: "client1", FDHard: 4096}, {Label: "client2", FDHard: 1024}})
	if p.OK || p.Code != CodeFDLimit || !strings.Contains(p.Refusal, "needs 1064 fds (+64 spare) on client2, whose hard limit is 1024") {
		t.Errorf("fd: %+v", p)
	}
}
