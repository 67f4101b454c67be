package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"csbench/internal/sizes"
)

const sizesUsage = `Usage: csb sizes [-key KEY] LIST

Checks a comma-separated list of payload sizes as the reference server
reads them (internal/sizes: digits with an optional k = 1024 or m =
1048576): each one written as the server names it (/payload/<name>), none
twice, none above 64m. Prints "NAME BYTES" per size, in the list's order;
on a bad list one line naming KEY (the setting it came from) and exit 2.

Example:
  csb sizes -key PAYLOADS 1k,10k,100k
`

func runSizes(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sizes", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	key := fs.String("key", "sizes", "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: sizes: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, sizesUsage)
		return nil
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("%w: sizes needs one LIST", errUsage)
	}
	list := fs.Arg(0)
	var b strings.Builder
	seen := map[int]bool{}
	for _, item := range strings.Split(list, ",") {
		n, err := sizes.ParseSize(item)
		if err != nil {
			if errors.Is(err, sizes.ErrTooLarge) {
				return fmt.Errorf("%w: %s=%s: %s is larger than the server serves (at most %s)", errBadInput, *key, list, item, sizes.SizeName(sizes.MaxSizeBytes))
			}
			return fmt.Errorf("%w: %s=%s: %v", errBadInput, *key, list, err)
		}
		if name := sizes.SizeName(n); name != item {
			return fmt.Errorf("%w: %s=%s: the server serves %d bytes as /payload/%s, not /payload/%s: write %s", errBadInput, *key, list, n, name, item, name)
		}
		if seen[n] {
			return fmt.Errorf("%w: %s=%s: %s is listed twice", errBadInput, *key, list, item)
		}
		seen[n] = true
		fmt.Fprintf(&b, "%s %d\n", item, n)
	}
	_, err := io.WriteString(stdout, b.String())
	return err
}
