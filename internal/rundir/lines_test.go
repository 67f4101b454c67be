package rundir

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A listing counts the same plain, gzipped and as its lines file once the
// listing is gone; blank lines are not counted; a lines file of another
// listing or schema is refused; with neither, the listing's own error.
func TestCountLinesListingOrLinesFile(t *testing.T) {
	dir := t.TempDir()
	listing := bytes.Repeat([]byte("0 0 198.18.0.1:8080 198.18.1.2:40000\n"), 3000)
	listing = append(listing, "\n  \nlast line without a newline"...)
	plain, gz := filepath.Join(dir, "idle.held.established"), filepath.Join(dir, "b.held.established")
	if err := os.WriteFile(plain, listing, 0o644); err != nil {
		t.Fatal(err)
	}
	writeGz(t, gz+".gz", listing)
	for _, p := range []string{plain, gz, gz + ".gz"} {
		n, err := CountLines(strings.TrimSuffix(p, ".gz"))
		if err != nil || n != 3001 {
			t.Fatalf("CountLines(%s) = %d, %v; want 3001", p, n, err)
		}
		out, err := WriteLines(p)
		if err != nil || out != LinesName(p) {
			t.Fatalf("WriteLines(%s) = %s, %v", p, out, err)
		}
	}
	a, _ := os.ReadFile(LinesName(plain))
	b, _ := os.ReadFile(LinesName(gz))
	if !bytes.Equal(bytes.Replace(a, []byte(`"idle.`), []byte(`"b.`), 1), b) {
		t.Fatalf("the plain and gzipped listings' lines files differ:\n%s%s", a, b)
	}
	for _, p := range []string{plain, gz + ".gz"} {
		os.Remove(p)
	}
	for _, p := range []string{plain, gz} {
		if n, err := CountLines(p); err != nil || n != 3001 {
			t.Fatalf("CountLines(%s) from its lines file = %d, %v", p, n, err)
		}
	}
	// Another listing's count, or another schema, is not taken.
	os.WriteFile(LinesName(gz), bytes.Replace(a, []byte(`"schema_version":1`), []byte(`"schema_version":2`), 1), 0o644)
	if _, err := CountLines(gz); err == nil || !strings.Contains(err.Error(), "schema_version 2") {
		t.Fatalf("schema 2: %v", err)
	}
	os.WriteFile(LinesName(gz), a, 0o644)
	if _, err := CountLines(gz); err == nil || !strings.Contains(err.Error(), `counts "idle.held.established"`) {
		t.Fatalf("another listing's count: %v", err)
	}
	missing := filepath.Join(dir, "c.held.established")
	if _, err := CountLines(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("neither: %v", err)
	}
	if _, err := WriteLines(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteLines of nothing: %v", err)
	}
}
