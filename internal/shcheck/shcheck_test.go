package shcheck

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestScan(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []Finding
	}{
		{"one", `x=$(a)`, nil},
		{"two in a word", `x="$(a)$(b)"`, []Finding{{1, 8}}},
		{"two assignments", `x=$(a) y=$(b)`, []Finding{{1, 10}}},
		{"two arguments", `: "$(a)" "$(b)"`, []Finding{{1, 11}}},
		{"local", `local a=$(x) b=$(y)`, []Finding{{1, 16}}},
		{"process substitution", `cat "$(a)" <(b)`, []Finding{{1, 12}}},
		{"condition", `[[ "$(a)" == "$(b)" ]]`, []Finding{{1, 15}}},
		{"arithmetic", `x=$(( $(a) + $(b) ))`, []Finding{{1, 14}}},
		{"in a parameter expansion", `x="$(a)${y:-$(b)}"`, []Finding{{1, 13}}},
		{"lines of one string", "s=\"$(a)\ncd $(b)\"", []Finding{{2, 4}}},
		{"separate commands", "x=$(a); y=$(b)\nz=$(c) && w=$(d) || v=$(e) | u=$(f)", nil},
		{"nested", `x=$(a "$(b)" "$(c)")`, nil},
		{"nested then another", `x="$(a "$(b)")$(c)"`, []Finding{{1, 15}}},
		{"backquotes", "x=\"$(a)`b`\"", nil},
		{"single quotes", `x='$(a)$(b)'`, nil},
		{"comment", "x=$(a) # $(b)", nil},
		{"escaped", `x="$(a)\$(b)"`, nil},
		{"dollar-single", `x=$'\'$(a)'$(b)`, nil},
		{"here-document", "cat <<E >$(a)\n$(b) $(c)\nE\ny=$(d)", nil},
		{"here-document, then two", "cat <<-'E'\n\t$(b)\n\tE\ny=$(c)$(d)", []Finding{{4, 7}}},
		{"here-string", `cat <<<"$(a)" >$(b)`, []Finding{{1, 16}}},
		{"case in a substitution", "x=$(case $y in a) echo 1;; esac)$(b)", []Finding{{1, 33}}},
		{"continued line", "f \"$(a)\" \\\n  \"$(b)\"", []Finding{{2, 4}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Scan(tc.src); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Scan(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

// TestRepository: no command of the library or a runner expands two
// substitutions (the runs' INT, TERM and HUP traps must never be lost).
func TestRepository(t *testing.T) {
	var files []string
	for _, pattern := range []string{"lib/*.sh", "lib/host/*.sh", "0*/*.sh", "lab/*.sh"} {
		m, err := filepath.Glob(filepath.Join("..", "..", pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 20 {
		t.Fatalf("found %d shell files; run from internal/shcheck", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range Scan(string(b)) {
			t.Errorf("%s:%s: a second command substitution in one command (set it in a command of its own first)", filepath.Clean(f)[6:], x)
		}
	}
}
