package cli

import (
	"fmt"
	"io"

	"csbench/internal/settings"
)

const checkSettingsUsage = `Usage: csb check-settings KEY KIND ORIGIN VALUE...

Checks a runner's resolved settings before anything starts
(internal/settings), four arguments each: the key, the kind it was declared
with (posint, sizes, enum:a|b, ...), where the value came from (default,
environment, flag, FILE:LINE) and the value. Every value is checked against
its kind; when all pass, the rules across settings (SERVER_CMD only with
SERVER=cmd, the TLS files together, ...). Prints one "error: ..." line per
finding on stderr and exits 2; exits 0, silent, when all hold.

Example:
  csb check-settings SERVER_PORT port flag 8080 PAYLOADS sizes default 1k,10k
`

func runCheckSettings(args []string, stdout, stderr io.Writer) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(stdout, checkSettingsUsage)
		return nil
	}
	if len(args)%4 != 0 {
		return fmt.Errorf("%w: check-settings takes KEY KIND ORIGIN VALUE groups of four, got %d arguments", errUsage, len(args))
	}
	set := make([]settings.Setting, 0, len(args)/4)
	for i := 0; i < len(args); i += 4 {
		set = append(set, settings.Setting{Key: args[i], Kind: args[i+1], Origin: args[i+2], Value: args[i+3]})
	}
	errs, err := settings.Check(set)
	if err != nil {
		return err
	}
	for _, e := range errs {
		fmt.Fprintf(stderr, "error: %s\n", e)
	}
	if len(errs) > 0 {
		return exitCodeError(2)
	}
	return nil
}
