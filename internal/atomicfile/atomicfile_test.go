package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteReplaces(t *testing.T) {
	p := filepath.Join(t.TempDir(), "summary.json")
	if err := Write(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("new\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new\n" {
		t.Fatalf("got %q", b)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", st.Mode().Perm())
	}
	onlyFile(t, filepath.Dir(p), "summary.json")
}

// A write that fails half way (here the filler fails after writing part of
// the new contents, as a full disk would) leaves the old file untouched and
// no temporary file behind.
func TestFailedWriteKeepsOldFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "summary.csv")
	if err := Write(p, []byte("old contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := &os.PathError{Op: "write", Path: p + ".tmp", Err: syscall.ENOSPC}
	err := WriteWith(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "new cont")
		return full
	})
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want a disk-full error", err)
	}
	want := "disk full: no space left on " + filepath.Dir(p) + " (writing summary.csv)"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %q, want it to start with %q", err, want)
	}
	if b, _ := os.ReadFile(p); string(b) != "old contents\n" {
		t.Fatalf("old file changed: %q", b)
	}
	onlyFile(t, filepath.Dir(p), "summary.csv")

	other := WriteWith(p, 0o644, func(io.Writer) error { return fmt.Errorf("boom") })
	if errors.Is(other, ErrDiskFull) || !strings.Contains(other.Error(), p) {
		t.Errorf("err = %v, want a plain error naming %s", other, p)
	}
}

// A missing directory fails before anything is written.
func TestWriteMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope", "x")
	if err := Write(p, []byte("x"), 0o644); err == nil {
		t.Fatal("want an error")
	}
}

func TestAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "Report.md")
	if err := Write(p, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Append(p, []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "a\nb\n" || st.Mode().Perm() != 0o600 {
		t.Fatalf("got %q mode %v", b, st.Mode().Perm())
	}
}

// On a real full filesystem (/dev/full is one: every write fails with
// ENOSPC) the error names the disk. /dev/full is a device, so this checks
// the classification only.
func TestDescribeDevFull(t *testing.T) {
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer f.Close()
	_, werr := f.Write([]byte("x"))
	if err := describe("/results/run/summary.json", werr); !errors.Is(err, ErrDiskFull) {
		t.Fatalf("describe(%v) = %v, want disk full", werr, err)
	}
}

func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("dir holds %v, want only %s", names, name)
	}
}

// A path that is not a regular file (here a named pipe, as /dev/null is a
// device) is written in place: it is still a pipe afterwards, its reader
// got the bytes, and nothing else was left in its directory.
func TestWriteNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if err := Write(fifo, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a named pipe: %v %v", fifo, fi.Mode(), err)
	}
	select {
	case b := <-got:
		if string(b) != "x\n" {
			t.Errorf("the reader got %q, want %q", b, "x\n")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the pipe's reader got nothing in 10 s")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want the pipe alone", len(ents))
	}
}
