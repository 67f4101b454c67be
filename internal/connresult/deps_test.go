package connresult

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadersImportNoClient: the packages that read connclient's results
// (and csb's cli) import none of the client's engine, wire or system
// packages, directly or through another: what connresult is apart for.
// The imports are read from the sources (no build): every non-test file of
// every csbench package reached.
func TestReadersImportNoClient(t *testing.T) {
	const module = "csbench/internal/"
	client := map[string]bool{"connclient": true, "h1wire": true, "h2wire": true, "clientsys": true, "responder": true}
	via := map[string]string{} // package reached -> the package that imported it
	var queue []string
	for _, r := range []string{"summary", "phase3", "phase4", "phase5", "capacity", "cli"} {
		via[r] = ""
		queue = append(queue, r)
	}
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		if client[pkg] {
			chain := pkg
			for p := via[pkg]; p != ""; p = via[p] {
				chain = p + " -> " + chain
			}
			t.Errorf("a reader imports the client: %s", chain)
			continue
		}
		files, err := os.ReadDir(filepath.Join("..", pkg))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			name := f.Name()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", pkg, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				dep, ok := strings.CutPrefix(path, module)
				if _, seen := via[dep]; !ok || seen {
					continue
				}
				via[dep] = pkg
				queue = append(queue, dep)
			}
		}
	}
	if _, ok := via["connresult"]; !ok {
		t.Error("no reader reached connresult: the walk is broken")
	}
}
