// Package golden compares generated text with testdata/<name>.golden files;
// `go test ./... -update` rewrites them. A mismatch shows a line diff.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"csbench/internal/atomicfile"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden files")

// Check compares got with testdata/<name>.golden.
func Check(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := atomicfile.Write(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the generated text (go test -update rewrites it):\n%s", path, Diff(string(want), got))
	}
}

// Diff is a small line diff: the lines of want and got that differ, with
// their line numbers, at most 40 of them.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl == gl {
			continue
		}
		if n++; n > 40 {
			b.WriteString("...\n")
			break
		}
		b.WriteString("line " + itoa(i+1) + ":\n- " + wl + "\n+ " + gl + "\n")
	}
	return b.String()
}

func itoa(i int) string {
	s := ""
	for {
		s = string(rune('0'+i%10)) + s
		i /= 10
		if i == 0 {
			return s
		}
	}
}

// CopyTree copies the directory src into a new temporary directory, under
// the name base (filepath.Base(src) when base is ""), and returns the copy's
// path: tests summarize a fixture run without ever writing into testdata.
func CopyTree(t *testing.T, src, base string) string {
	t.Helper()
	if base == "" {
		base = filepath.Base(src)
	}
	dst := filepath.Join(t.TempDir(), base)
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return atomicfile.Write(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// Documented checks that the section of the Markdown file doc (a path
// from the test's directory) under the heading that begins with heading
// ("## Phase 3") names every one of codes as `code`: a closed list of
// codes in Go and its documentation stay one list.
func Documented(t *testing.T, doc, heading string, codes []string) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+heading)
	if i < 0 {
		t.Fatalf("%s has no section %q", doc, heading)
	}
	sec := text[i+1:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if j := strings.Index(sec[1:], "\n"+level); j >= 0 {
		sec = sec[:j+1]
	}
	for _, c := range codes {
		if !strings.Contains(sec, "`"+c+"`") {
			t.Errorf("%s, section %q, does not document the code `%s`", doc, heading, c)
		}
	}
}
