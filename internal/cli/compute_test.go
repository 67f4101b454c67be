package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestSummarizingDoesNotFormat: computing the figures of summary.json never
// calls the report package (the figures are numbers; only reports format,
// and a verdict's evidence sentence, which summary.json holds, writes its
// numbers with internal/decimal).
//
// How: every non-test Go file under internal/ is parsed (go/parser; type
// checking from source took 16 s, this takes 0.2 s), and the functions
// reachable from each phase's Summarize method are followed by name: pkg.F
// to a function or package-level variable of another csbench package, F to
// one of the same package, x.M to every method named M in any csbench
// package but report, except where x is a local declared with a standard
// library type or from a standard library call (sc := bufio.NewScanner(f):
// sc.Text() is not trust.Spread.Text). That is more edges than the program
// has, not fewer. The test fails on every reached function that names the
// report package, with the chain of calls that reaches it.
func TestSummarizingDoesNotFormat(t *testing.T) {
	g := parseTree(t, "..", "csbench/internal")
	var roots []string
	for k := range g.nodes {
		if strings.HasPrefix(k, "csbench/internal/phase") && strings.HasSuffix(k, ".Phase.Summarize") {
			roots = append(roots, k)
		}
	}
	sort.Strings(roots)
	if len(roots) < 5 {
		t.Fatalf("found the Summarize methods of %d phases (%v), want 5 or more: has the layout changed?", len(roots), roots)
	}
	from := map[string]string{}
	for _, r := range roots {
		from[r] = ""
	}
	queue := append([]string(nil), roots...)
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		n := g.nodes[k]
		if len(n.reports) > 0 && !stillFormatting[k] {
			t.Errorf("summarizing formats: %s names report.%s at %s (%d use(s) of the report package), reached by %s; write the number with decimal.Format or decimal.Pct (the same text)",
				k, n.reports[0].name, n.reports[0].pos, len(n.reports), chain(from, k))
		}
		for _, e := range g.edges(n) {
			if _, ok := from[e]; !ok {
				from[e] = k
				queue = append(queue, e)
			}
		}
	}
	for k := range stillFormatting {
		if _, reached := from[k]; !reached || len(g.nodes[k].reports) == 0 {
			t.Errorf("%s is in stillFormatting but no longer formats while summarizing: remove it from the list", k)
		}
	}
	_, measure := from["csbench/internal/httpphase.Measure"]
	_, verdict := from["csbench/internal/httpphase.Verdict"]
	if !measure || !verdict {
		t.Error("httpphase.Measure and Verdict are not reached from Phase 1's Summarize: the walk is broken")
	}
}

// stillFormatting lists functions allowed to format while summarizing:
// none now; the test keeps it so.
var stillFormatting = map[string]bool{}

// chain is the call path from a root to k.
func chain(from map[string]string, k string) string {
	var path []string
	for ; k != ""; k = from[k] {
		path = append([]string{strings.TrimPrefix(k, "csbench/internal/")}, path...)
	}
	return strings.Join(path, " → ")
}

// node is one function, method or package-level variable.
type node struct {
	pkg     string
	imports map[string]string // file's import name → path
	body    ast.Node
	reports []reportUse
}

type reportUse struct{ name, pos string }

// graph holds every node by key: pkg.Name, pkg.Recv.Name for methods.
type graph struct {
	nodes   map[string]*node
	methods map[string][]string // method name → keys
}

const reportPkg = "csbench/internal/report"

// parseTree parses every non-test .go file under dir (import path prefix).
func parseTree(t *testing.T, dir, prefix string) *graph {
	t.Helper()
	g := &graph{nodes: map[string]*node{}, methods: map[string][]string{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "testdata") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(path))
		pkg := prefix + "/" + filepath.ToSlash(rel)
		imports := map[string]string{}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imports[name] = p
		}
		add := func(key string, body ast.Node) {
			n := &node{pkg: pkg, imports: imports, body: body}
			ast.Inspect(body, func(x ast.Node) bool {
				if sel, ok := x.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && imports[id.Name] == reportPkg {
						n.reports = append(n.reports, reportUse{sel.Sel.Name, fset.Position(sel.Pos()).String()})
					}
				}
				return true
			})
			g.nodes[key] = n
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Body == nil {
					continue
				}
				if d.Recv == nil {
					add(pkg+"."+d.Name.Name, d.Body)
					continue
				}
				key := pkg + "." + recvName(d.Recv.List[0].Type) + "." + d.Name.Name
				add(key, d.Body)
				if pkg != reportPkg {
					// A value of a report type is had only from code
					// that names the report package, which is caught;
					// its common method names (P, H) would only add
					// false paths.
					g.methods[d.Name.Name] = append(g.methods[d.Name.Name], key)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok {
						for i, name := range vs.Names {
							if i < len(vs.Values) {
								add(pkg+"."+name.Name, vs.Values[i])
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// edges are the nodes n may call or read.
func (g *graph) edges(n *node) []string {
	var out []string
	ast.Inspect(n.body, func(x ast.Node) bool {
		switch e := x.(type) {
		case *ast.SelectorExpr:
			if id, ok := e.X.(*ast.Ident); ok {
				if p, ok := n.imports[id.Name]; ok {
					if g.nodes[p+"."+e.Sel.Name] != nil {
						out = append(out, p+"."+e.Sel.Name)
					}
					return false
				}
				if n.stdValue(id) {
					return true
				}
			}
			out = append(out, g.methods[e.Sel.Name]...)
		case *ast.Ident:
			if g.nodes[n.pkg+"."+e.Name] != nil {
				out = append(out, n.pkg+"."+e.Name)
			}
		}
		return true
	})
	return out
}

// stdValue reports whether the local id was declared with a standard
// library type, or from what a standard library function or composite
// literal gave (sc := bufio.NewScanner(f)): its methods are then the
// standard library's, not a csbench type's of the same name.
func (n *node) stdValue(id *ast.Ident) bool {
	if id.Obj == nil {
		return false
	}
	switch d := id.Obj.Decl.(type) {
	case *ast.Field:
		return n.stdType(d.Type)
	case *ast.ValueSpec:
		if d.Type != nil {
			return n.stdType(d.Type)
		}
		for i, name := range d.Names {
			if name.Obj == id.Obj && i < len(d.Values) {
				return n.stdExpr(d.Values[i])
			}
		}
	case *ast.AssignStmt:
		for i, lhs := range d.Lhs {
			if l, ok := lhs.(*ast.Ident); ok && l.Obj == id.Obj {
				if len(d.Rhs) == 1 {
					return n.stdExpr(d.Rhs[0])
				}
				return i < len(d.Rhs) && n.stdExpr(d.Rhs[i])
			}
		}
	}
	return false
}

// stdExpr: a call of a standard library function, or a standard library
// composite literal (or its address).
func (n *node) stdExpr(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.CallExpr:
		return n.stdType(x.Fun)
	case *ast.UnaryExpr:
		return x.Op == token.AND && n.stdExpr(x.X)
	case *ast.CompositeLit:
		return n.stdType(x.Type)
	}
	return false
}

// stdType: pkg.Name (or *pkg.Name) with pkg a standard library import.
func (n *node) stdType(e ast.Expr) bool {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	p, imported := n.imports[id.Name]
	return imported && !strings.HasPrefix(p, "csbench/")
}
