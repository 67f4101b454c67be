package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"csbench/internal/ipj"
)

// stdin is what `csb ipj` reads; tests replace it.
var stdin io.Reader = os.Stdin

// errNoRoute: ip -j route get printed no route.
var errNoRoute = errors.New("no route in the ip -j route get output")

// runIPJ is `csb ipj`: the runners' route guard, address and namespace
// checks read these lines instead of matching ip's human text.
func runIPJ(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: ipj needs a KIND", errUsage)
	}
	kind, rest := args[0], args[1:]
	want := map[string]int{"route": 0, "holders": 1, "netns": 0}
	n, ok := want[kind]
	if !ok {
		return fmt.Errorf("%w: ipj: unknown kind %q", errUsage, kind)
	}
	if len(rest) != n {
		return fmt.Errorf("%w: ipj %s takes %d argument(s)", errUsage, kind, n)
	}
	switch kind {
	case "route":
		routes, err := ipj.ParseRoutes(stdin)
		if err != nil {
			return err
		}
		if len(routes) == 0 || routes[0].Dev == "" {
			return errNoRoute
		}
		fmt.Fprintf(stdout, "%s\t%s\n", routes[0].Dev, routes[0].PrefSrc)
	case "holders":
		links, err := ipj.ParseLinks(stdin)
		if err != nil {
			return err
		}
		for _, name := range ipj.Holders(links, rest[0]) {
			fmt.Fprintln(stdout, name)
		}
	case "netns":
		list, err := ipj.ParseNetns(stdin)
		if err != nil {
			return err
		}
		for _, ns := range list {
			fmt.Fprintln(stdout, ns.Name)
		}
	}
	return nil
}
