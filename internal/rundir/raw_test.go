package rundir

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func writeGz(t *testing.T, path string, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	z.Write(b)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A raw file reads the same plain or gzipped; the plain one wins where
// both are there; one in neither form is fs.ErrNotExist under its own
// name; a gzip copy cut short is an error, never a shorter file.
func TestRawPlainOrGzipped(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("ESTAB 0 0 198.18.0.1:80 198.18.1.1:40000\n"), 5000)
	plain, gz := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt")
	if err := os.WriteFile(plain, want, 0o644); err != nil {
		t.Fatal(err)
	}
	writeGz(t, gz+".gz", want)
	for _, p := range []string{plain, gz} {
		got, err := ReadFile(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("ReadFile(%s) = %d bytes, %v; want %d bytes", p, len(got), err, len(want))
		}
		if !Exists(p) {
			t.Fatalf("Exists(%s) = false", p)
		}
	}
	writeGz(t, plain+".gz", []byte("other"))
	if got, _ := ReadFile(plain); !bytes.Equal(got, want) {
		t.Fatal("the gzip copy was read where the plain file is there")
	}
	missing := filepath.Join(dir, "c.txt")
	if _, err := ReadFile(missing); !errors.Is(err, fs.ErrNotExist) || Exists(missing) {
		t.Fatalf("a missing file: %v", err)
	}
	b, _ := os.ReadFile(gz + ".gz")
	if err := os.WriteFile(gz+".gz", b[:len(b)-6], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(gz); err == nil {
		t.Fatal("a cut gzip copy was read without an error")
	}
	// Files lists a gzipped raw file by its plain name, once.
	got, err := Files(dir, "", ".txt")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{plain, gz}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Files = %q, want %q", got, want)
	}
}
