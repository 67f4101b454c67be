package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

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
	if kind == "route-guard" {
		return routeGuard(rest)
	}
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

// routeGuard is `csb ipj route-guard -who HOST -server-ip IP [-nic NIC
// -nic-is TEXT] [-addrs A,B -addr-is TEXT] <ROUTE`: the seed's rule on one
// client host, from `ip -j route get SERVER_IP` (or the error text that
// printed instead: no route): traffic must leave through NIC, from one of
// ADDRS. TEXT is how the refusal names the setting (CLIENT_NIC=enp1s0).
func routeGuard(args []string) error {
	fs := flag.NewFlagSet("ipj route-guard", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	who, ip := fs.String("who", "", "the host"), fs.String("server-ip", "", "SERVER_IP")
	nic, nicIs := fs.String("nic", "", "its NIC"), fs.String("nic-is", "", "how to name it")
	addrs, addrIs := fs.String("addrs", "", "its addresses"), fs.String("addr-is", "", "how to name them")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 || *who == "" || *ip == "" {
		return fmt.Errorf("%w: ipj route-guard -who HOST -server-ip IP [-nic NIC -nic-is TEXT] [-addrs A,B -addr-is TEXT]", errUsage)
	}
	raw, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	text := strings.TrimRight(string(raw), "\n")
	routes, err := ipj.ParseRoutes(strings.NewReader(text))
	if err != nil || len(routes) == 0 || routes[0].Dev == "" {
		return fmt.Errorf("on %s, no route to SERVER_IP=%s (ip route get: %s)", *who, *ip, text)
	}
	dev, src := routes[0].Dev, routes[0].PrefSrc
	if *nic != "" && dev != *nic {
		from := ""
		if src != "" {
			from = " src " + src
		}
		return fmt.Errorf("on %s, traffic to SERVER_IP=%s would leave through %s, not %s: fix the route or set the NIC and SERVER_IP to the benchmark network (ip route get %s: dev %s%s)",
			*who, *ip, dev, *nicIs, *ip, dev, from)
	}
	if src != "" && *addrs != "" && !slices.Contains(strings.Split(*addrs, ","), src) {
		return fmt.Errorf("on %s, traffic to SERVER_IP=%s would come from %s on %s, not %s: set it to the address on %s", *who, *ip, src, dev, *addrIs, dev)
	}
	return nil
}
