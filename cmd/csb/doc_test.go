package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"csbench/internal/cli"
)

// TestDocListsEveryCommand: the doc comment of this file's package lists
// every subcommand of the table in internal/cli, in its order, each with
// its one-line summary (as benchstat's doc test keeps its doc and usage one
// truth). On a difference it prints the block the doc comment should hold.
func TestDocListsEveryCommand(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("main.go has no package doc comment")
	}
	var got, want []string
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if rest, ok := strings.CutPrefix(line, "\tcsb "); ok && !strings.HasPrefix(rest, "-") {
			name, summary, _ := strings.Cut(rest, " ")
			got = append(got, name+" "+strings.TrimSpace(summary))
		}
	}
	var block strings.Builder
	for _, c := range cli.Commands() {
		want = append(want, c[0]+" "+c[1])
		fmt.Fprintf(&block, "//\tcsb %-16s%s\n", c[0], c[1])
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cmd/csb/main.go's doc comment does not list the subcommands of internal/cli's table (name and summary, in order); its list should read:\n%s", block.String())
	}
}
