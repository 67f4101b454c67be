package mdtext

import (
	"strings"
	"testing"
)

// Ordinary names: what reports printed before escaping, byte for byte.
var ordinary = []string{
	"2026-12-01_040843_http-baseline", "../00-iperf3/results/2026-11-30_075434_iperf3-baseline/Report_00-iperf3.md",
	"/tmp/results", "csb", "nginx/1.24.0", "c10k-beyond.701040e2", "a:b", "HTTP_1.1", "x_",
}

func TestOrdinaryNamesUnchanged(t *testing.T) {
	for _, s := range ordinary {
		if s == "x_" {
			continue // a trailing underscore could close emphasis: escaped
		}
		if got := Text(s); got != s {
			t.Errorf("Text(%q) = %q", s, got)
		}
		if got := Code(s); got != "`"+s+"`" {
			t.Errorf("Code(%q) = %q", s, got)
		}
		if got := CodeCell(s); got != "`"+s+"`" {
			t.Errorf("CodeCell(%q) = %q", s, got)
		}
		if got := Target(s); got != s && s != "a:b" {
			t.Errorf("Target(%q) = %q", s, got)
		}
	}
}

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a|b", `a\|b`},
		{"](javascript:alert(1))", `\](javascript:alert(1))`},
		{"[x](javascript:alert(1))", `[x\](javascript:alert(1))`},
		{"![img](http://x/y.png)", `![img\](http://x/y.png)`},
		{"[x][r1] [y]: z", `[x\][r1] [y\]: z`},
		{"wrk 4.1.0 [epoll] x", "wrk 4.1.0 [epoll] x"},
		{"ends [x]", `ends [x\]`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"<javascript:alert(1)>", `\<javascript:alert(1)\>`},
		{"a`b", "a\\`b"},
		{"line1\nline2\r\tx", "line1 line2  x"},
		{"*bold* _em_ ~~del~~", `\*bold\* \_em\_ ~~del~~`},
		{"snake_case_name", "snake_case_name"},
		{"_lead", `\_lead`},
		{"a\\|b", `a\\\|b`},
		{`invalid character '\x00'`, `invalid character '\x00'`},
		{`C:\dir\`, `C:\dir\\`},
		{`\(x\)`, `\\(x\\)`},
		{"&amp; &#x41;", `\&amp; \&#x41;`},
		{"", ""},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestLabel(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http-baseline", "http-baseline"},
		{"a[b", `a\[b`},
		{"x](javascript:alert(1))", `x\](javascript:alert(1))`},
		{"[y][r1]", `\[y\]\[r1\]`},
	} {
		if got := Label(c.in); got != c.want {
			t.Errorf("Label(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCode(t *testing.T) {
	for _, c := range []struct{ in, want, cell string }{
		{"x", "`x`", "`x`"},
		{"a`b", "`` a`b ``", "`` a`b ``"},
		{"``x", "``` ``x ```", "``` ``x ```"},
		{"`", "`` ` ``", "`` ` ``"},
		{"a|b", "`a|b`", "`a\\|b`"},
		{"a\\|b", "`a\\|b`", "`a\\\\\\|b`"},
		{"a\nb", "`a b`", "`a b`"},
		{"](javascript:alert(1))", "`](javascript:alert(1))`", "`](javascript:alert(1))`"},
	} {
		if got := Code(c.in); got != c.want {
			t.Errorf("Code(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := CodeCell(c.in); got != c.cell {
			t.Errorf("CodeCell(%q) = %q, want %q", c.in, got, c.cell)
		}
	}
}

func TestTarget(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"../a/Report_x.md", "../a/Report_x.md"},
		{"javascript:alert(1)", "./javascript:alert%281%29"},
		{"JavaScript:alert(1)/x", "./JavaScript:alert%281%29/x"},
		{"../runs/](javascript:alert(1))/R.md", "../runs/%5D%28javascript:alert%281%29%29/R.md"},
		{"../my runs/x.md", "../my%20runs/x.md"},
		{"a|b\nc<d>", "a%7Cb%0Ac%3Cd%3E"},
		{"100%", "100%25"},
		{"data:text/html,x", "./data:text/html%2Cx"},
		{"x/y:z", "x/y:z"},
	} {
		if got := Target(c.in); got != c.want {
			t.Errorf("Target(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Hostile strings: whatever they hold, the escaped text has no character
// that could end a table row, open a link or a tag, or start a code span
// unescaped; a target has nothing that ends a link and no scheme.
func TestHostile(t *testing.T) {
	hostile := []string{
		"](javascript:alert(1))", "x|y|z", "a\nb|c", "`rm -rf /`", "<img src=x onerror=alert(1)>",
		"[a]: javascript:alert(1)", "\\", "\\\\|", "x\u2028y", "''\"\"", "[[x]]", "javascript:alert(1)",
	}
	for _, s := range hostile {
		txt := Text(s)
		if strings.ContainsAny(txt, "\n\r") {
			t.Errorf("Text(%q) = %q holds a line break", s, txt)
		}
		for i := 0; i < len(txt); i++ {
			if strings.IndexByte("<>|`&", txt[i]) >= 0 && backslashesBefore(txt, i)%2 == 0 {
				t.Errorf("Text(%q) = %q: %q at %d unescaped", s, txt, txt[i], i)
			}
		}
		for _, end := range []string{"](", "][", "]:"} {
			if unescaped(txt, end) != 0 {
				t.Errorf("Text(%q) = %q: %q unescaped", s, txt, end)
			}
		}
		if lab := Label(s); strings.Count(lab, "[") != strings.Count(lab, `\[`) || strings.Count(lab, "]") != strings.Count(lab, `\]`) {
			t.Errorf("Label(%q) = %q: a bracket unescaped", s, lab)
		}
		cell := CodeCell(s)
		for i := 0; i < len(cell); i++ {
			if cell[i] == '|' && backslashesBefore(cell, i)%2 == 0 {
				t.Errorf("CodeCell(%q) = %q: a pipe ends the cell at %d", s, cell, i)
			}
		}
		if strings.ContainsAny(cell, "\n\r") {
			t.Errorf("CodeCell(%q) = %q holds a line break", s, cell)
		}
		tg := Target(s)
		if strings.ContainsAny(tg, " ()<>[]|`\\\n\r\"'") {
			t.Errorf("Target(%q) = %q can end the link", s, tg)
		}
		if first, _, _ := strings.Cut(tg, "/"); strings.Contains(first, ":") {
			t.Errorf("Target(%q) = %q has a scheme", s, tg)
		}
		if l := Link(s, s); unescaped(l, "](") != 1 {
			t.Errorf("Link(%q) = %q is not one link", s, l)
		}
	}
}

func backslashesBefore(s string, i int) int {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n
}

// unescaped counts the occurrences of sub in s not led by a backslash.
func unescaped(s, sub string) int {
	n := 0
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub && backslashesBefore(s, i)%2 == 0 {
			n++
		}
	}
	return n
}
