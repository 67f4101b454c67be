package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"csbench/internal/golden"
)

// hostile is text a user could give a results root, a run directory, a
// run name or an argument: a pipe, backticks, a newline and a link to
// javascript.
const hostile = "x|y`z`\n](javascript:alert(1)) [a](javascript:alert(2))"

// Issue 34: the committed Phase 0 reference run copied under a results
// root and a run directory named with hostile text, its run_id and argv
// made hostile too, then summarized, reported and compared: no Markdown
// written holds a link to javascript or a table row split or widened by
// the text.
func TestHostileNamesEscaped(t *testing.T) {
	t.Setenv("PATH", "")
	ref := filepath.Join("..", "..", "00-iperf3", "results", "2026-12-01_040745_iperf3-baseline")
	root := filepath.Join(t.TempDir(), "results "+hostile)
	run := filepath.Join(root, "00-iperf3", "2026-12-01_040745_iperf3-"+strings.ReplaceAll(hostile, "\n", ""))
	if err := os.MkdirAll(filepath.Dir(run), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(golden.CopyTree(t, ref, ""), run); err != nil {
		t.Fatal(err)
	}
	env, err := os.OpenFile(filepath.Join(run, "run.env"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	oneLine := strings.ReplaceAll(hostile, "\n", " ")
	if _, err := env.WriteString("run_id=2026-12-01_040745_" + oneLine + "\nargv=-s 'RUN_NAME=" + oneLine + "'\n"); err != nil {
		t.Fatal(err)
	}
	env.Close()

	var stdout, stderr bytes.Buffer
	main := func(args ...string) string {
		t.Helper()
		stdout.Reset()
		stderr.Reset()
		if got := Main(args, &stdout, &stderr); got != 0 {
			t.Fatalf("csb %s: status %d (stderr %q)", strings.Join(args, " "), got, stderr.String())
		}
		return stdout.String()
	}
	main("summarize", run)
	reports, _ := filepath.Glob(filepath.Join(strings.ReplaceAll(run, "[", "[[]"), "Report_*.md"))
	if len(reports) != 1 {
		t.Fatalf("reports %v", reports)
	}
	out := filepath.Join(t.TempDir(), "report")
	main("report", "-root", root, "-out", out)
	docs := map[string]string{"compare A B": main("compare", run, run)}
	for _, f := range []string{reports[0], filepath.Join(out, "README.md")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(f)] = string(b)
	}
	if !strings.Contains(docs["README.md"], "javascript:alert") || !strings.Contains(docs[filepath.Base(reports[0])], "javascript:alert") {
		t.Fatalf("the hostile text is not in the reports at all:\n%s", docs["README.md"])
	}
	for name, md := range docs {
		checkMarkdown(t, name, md)
	}
}

var (
	// a link's target: ]( not escaped, up to the closing parenthesis
	inlineLink = regexp.MustCompile(`(^|[^\\])(\\\\)*\]\(([^)]*)\)`)
	refDef     = regexp.MustCompile(`(?m)^\[[^\]]+\]:\s*(\S+)`)
	scheme     = regexp.MustCompile(`^<?[A-Za-z][A-Za-z0-9+.-]*:`)
)

// checkMarkdown: no link of md has a target with a scheme, and every table
// row has its header's number of cells and is followed by a row or a blank
// line.
func checkMarkdown(t *testing.T, name, md string) {
	t.Helper()
	text := withoutCodeSpans(md)
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		if scheme.MatchString(m[3]) {
			t.Errorf("%s: a link to %q", name, m[3])
		}
	}
	for _, m := range refDef.FindAllStringSubmatch(text, -1) {
		if scheme.MatchString(m[1]) {
			t.Errorf("%s: a reference to %q", name, m[1])
		}
	}
	lines := strings.Split(md, "\n")
	cells := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "|") {
			if cells > 0 && l != "" {
				t.Errorf("%s line %d: a table row runs on: %q", name, i+1, l)
			}
			cells = 0
			continue
		}
		n := pipes(l)
		if cells == 0 {
			cells = n
		} else if n != cells {
			t.Errorf("%s line %d: %d cell boundaries, the header has %d: %q", name, i+1, n, cells, l)
		}
	}
}

// pipes counts the pipes of a table row that end a cell: those after an
// even number of backslashes.
func pipes(l string) int {
	n, slashes := 0, 0
	for i := 0; i < len(l); i++ {
		switch l[i] {
		case '\\':
			slashes++
			continue
		case '|':
			if slashes%2 == 0 {
				n++
			}
		}
		slashes = 0
	}
	return n
}

// withoutCodeSpans is md with the text of each code span (CommonMark: a
// run of backticks up to the next run of the same length) replaced by x,
// where nothing is a link.
func withoutCodeSpans(md string) string {
	var b strings.Builder
	run := func(i int) int {
		j := i
		for j < len(md) && md[j] == '`' {
			j++
		}
		return j - i
	}
	for i := 0; i < len(md); {
		if md[i] != '`' || (i > 0 && md[i-1] == '\\') {
			b.WriteByte(md[i])
			i++
			continue
		}
		n := run(i)
		end := -1
		for j := i + n; j < len(md); {
			if md[j] == '`' {
				m := run(j)
				if m == n {
					end = j
					break
				}
				j += m
				continue
			}
			j++
		}
		if end < 0 {
			b.WriteString(md[i : i+n])
			i += n
			continue
		}
		b.WriteString(strings.Repeat("`", n) + "x" + strings.Repeat("`", n))
		i = end + n
	}
	return b.String()
}
