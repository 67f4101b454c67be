package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const cellsHead = "name\tstatus\tstart\tend\tparams\terror\n"

func writeRun(t *testing.T, cells string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "run.env"), []byte("phase=00-iperf3\nstatus=partial\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cells.tsv"), []byte(cells), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A run stopped by a full disk left rows without a start or an end, or a
// last row cut off mid-line: each is kept as a failed cell saying why,
// the rows after it are read, and the run is read, not refused.
func TestCellsCutShort(t *testing.T) {
	dir := writeRun(t, cellsHead+
		"c2s-1\tok\t1796024086102\t1796024090119\tstreams=1;reverse=0\t\n"+
		"c2s-4\tfailed\t\t1796024094355\tstreams=4;reverse=0\tdisk full: no space left on /mnt (writing /mnt/r/.disk-reserve)\n"+
		"s2c-1\tok\t1796024094559\t\tstreams=1\t\n"+
		"s2c-4\tfailed\t\t\t\t\n"+
		"s2c-8\tok\t1796024098782\t17960")
	r, err := Read(dir)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	want := []struct{ name, status, err string }{
		{"c2s-1", "ok", ""},
		{"c2s-4", "failed", "the row of cell c2s-4 has no start: the run was cut short (disk full?); disk full: no space left on /mnt (writing /mnt/r/.disk-reserve)"},
		{"s2c-1", "failed", "the row of cell s2c-1 has no end: the run was cut short (disk full?)"},
		{"s2c-4", "failed", "the row of cell s2c-4 has no start and no end: the run was cut short (disk full?)"},
		{"s2c-8", "failed", "the row of cell s2c-8 has no end (cut off mid-line): the run was cut short (disk full?)"},
	}
	if len(r.Cells) != len(want) {
		t.Fatalf("%d cells, want %d: %+v", len(r.Cells), len(want), r.Cells)
	}
	for i, w := range want {
		c := r.Cells[i]
		if c.Name != w.name || c.Status != w.status || c.Error != w.err || c.CutShort != (i > 0) {
			t.Errorf("cell %d = %q %q %q cut=%v, want %q %q %q", i, c.Name, c.Status, c.Error, c.CutShort, w.name, w.status, w.err)
		}
	}
	// A cell without a start takes its end's time, and the other way round:
	// a place in the run, no window.
	if c := r.Cells[1]; !c.Start.Equal(c.End) || !c.End.Equal(time.UnixMilli(1796024094355)) {
		t.Errorf("c2s-4 window %v..%v, want both at its end", c.Start, c.End)
	}
	if c := r.Cells[2]; !c.End.Equal(c.Start) || c.Params["streams"] != "1" {
		t.Errorf("s2c-1 window %v..%v params %v", c.Start, c.End, c.Params)
	}
}

// A last row cut off inside its name keeps nothing; one cut inside its
// status or params keeps the cell.
func TestCellsCutMidLine(t *testing.T) {
	for in, want := range map[string]string{
		"c2s-":                   "",
		"c2s-1\to":               "the row of cell c2s-1 has no start and no end (cut off mid-line): the run was cut short (disk full?)",
		"c2s-1\tok\t1\t2\tstrea": "the row of cell c2s-1 is cut off mid-line: the run was cut short (disk full?)",
	} {
		r, err := Read(writeRun(t, cellsHead+"a\tok\t1\t2\t\t\n"+in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if want == "" {
			if len(r.Cells) != 1 {
				t.Errorf("%q: %d cells, want only the whole row", in, len(r.Cells))
			}
			continue
		}
		if len(r.Cells) != 2 || r.Cells[1].Error != want || r.Cells[1].Status != "failed" {
			t.Errorf("%q: cells %+v, want the second failed with %q", in, r.Cells, want)
		}
	}
}

// What no cut can make stays an error naming the file and the line: a
// short row followed by others, a start that is not a number.
func TestCellsMalformed(t *testing.T) {
	for in, want := range map[string]string{
		"a\tok\t1\n" + "b\tok\t1\t2\t\t\n": "cells.tsv:2: want 6 tab-separated fields, got 3",
		"a\tok\tx1\t2\t\t\n":               "cells.tsv:2: start: strconv.ParseInt: parsing \"x1\"",
		"a\tok\t1\t2y\t\t\n":               "cells.tsv:2: end: strconv.ParseInt: parsing \"2y\"",
	} {
		_, err := Read(writeRun(t, cellsHead+in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want ...%s", in, err, want)
		}
	}
}
