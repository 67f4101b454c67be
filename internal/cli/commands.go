package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"csbench/internal/httpphase"
	"csbench/internal/rundir"
)

// command is one csb subcommand: its row in `csb -h` and in cmd/csb's doc
// comment (a test checks the doc lists every command with its summary),
// and the function `csb NAME ARGS...` runs.
type command struct {
	name    string
	summary string   // one line: what it does
	usage   []string // its forms, as typed after "csb"
	more    string   // csb -h: what follows the summary (wrapped)
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands is every subcommand, in the order csb -h lists them. A new one
// is one row here and one line in cmd/csb/main.go's doc comment.
var commands = []command{
	{"summarize", "regenerate each run directory's summary and report", []string{"summarize DIR..."},
		"Reads the raw files (run.env, cells.tsv, raw/, monitors/, env/) and (re)writes summary.json, summary.csv, the phase's Report_*.md and its charts. It decides the run's status (ok, partial, failed) from the runner's end and every cell's verdict, and appends it to run.env when run.env does not already say it (status, summarize_error: what the summary found): the runner logs and exits from that line. Safe to re-run at any time: no raw output is touched, notes.md is included.", runSummarize},
	{"report", "build the cross-phase report from each phase's latest run", []string{"report [-root DIR] [-out DIR]"},
		"OUT/README.md (default report/): one line of findings per phase, links to the phase reports, cross-phase charts. Runs are read from DIR/<phase>/ with -root (a RESULTS_ROOT; runs/ holds your own), or without it from <phase>/results/ under the current directory: the committed reference runs. A run whose summary.json cannot be read (truncated, not JSON, another schema_version, a figure no tool produces) is skipped: named with why on stderr and under \"Skipped runs\"; exit 0 when any run was reported, 1 when none could be read.", runReport},
	{"compare", "set two runs, or two results roots, side by side", []string{"compare [-metrics M,M|all] [-json] [-alpha A] A B", "compare -roots [-all] [-out FILE] [-alpha A] ROOT_A ROOT_B"},
		"Two run directories of the same phase: first where their environments differ (CPU model, count and pinning, kernel, link, qdisc, the phase's sysctls, the server under test and its settings, tool versions, lab, profile: one line each, a stable code per fact), then cell by cell each metric in both, change and ratio, and with repetitions whether the change is beyond the spread (A is the baseline; default metrics: the verdicts' ones). An HTTP/1.1 run against an HTTP/2 run, or a run over both: \"What multiplexing changed\", each HTTP/1.1 cell beside every HTTP/2 cell of the same payload and requests in flight (1k-c64 with 1k-c16-m4), the side whose CPU per request moved. -json: the same as one JSON document (schema_version, environment.differences[].code, multiplexing). With -roots, the latest run of each runner of Phases 1 to 5 in two results roots (e.g. SERVER=csb and SERVER=nginx), or with -all every run of each runner in a root, pooled as repetitions (an A/B's rounds: the significance test then has a value per run and repetition): RPS, p99, server CPU per request, RSS per connection, Phase 5 each payload's capacity, each with its ratio; columns named by the servers under test; a run of either root whose summary.json cannot be read is skipped, named with why on stderr and under \"Skipped runs\" (exit 1 when a root has no run that can be read).", runCompare},
	{"ipj", "read ip -j output on stdin, print what runners check", []string{"ipj route|holders IP|netns", "ipj route-guard -who HOST -server-ip IP [-nic NIC ...] <ROUTE"},
		"A route's device and source, the interfaces carrying IP, the namespace names. route-guard (flags: -nic NIC -nic-is TEXT -addrs A,B -addr-is TEXT): the route guard's verdict on one client host from its ip -j route get SERVER_IP (exit 1 naming where the traffic would go instead).", noStderr(runIPJ)},
	{"check", "fail when a tool's raw output reports an error", []string{"check KIND FILE", "check [-non2xx-max F] wrk|oha FILE"},
		"Exit 1 with the tool's own error when FILE (raw output of KIND: iperf3) reports a failure, although the tool exited 0; KIND json: exit 1 unless FILE is one well-formed JSON document. KIND connclient: exit 1 unless FILE is connclient's result document, exit 3 when it is a low-rate one in which any request failed (timed out, refused, an error status), naming how many and why: the same verdict as Phase 3's summary. KIND wrk or oha: exit 1 when FILE cannot be read as that load generator's output, exit 3 (the cell ran, its figures stand, it is not ok) when no response carried the payload or more than the fraction F (NON2XX_MAX, default 0) of its responses had an error status, naming the statuses: the same verdict as the summary's.", runCheck},
	{"c10k-plan", "plan one Phase 3 scenario from both hosts' facts", []string{"c10k-plan FLAGS"},
		"Prints KEY=VALUE lines; -out writes the plan document (-h: flags).", noStderr(runC10kPlan)},
	{"clock", "each host's clock offset, and whether it is in bound", []string{"clock -bound-ms N <SAMPLES"},
		"From timed readings (stdin: LABEL T0_US REMOTE_US T1_US); prints the verdict and a cell's start lead (-h).", noStderr(runClock)},
	{"start-at", "run a command at a wall-clock instant, record when", []string{"start-at -due EPOCH_MS -out FILE -- CMD [ARGS...]"},
		"An N-client run's common start: signals are passed on, FILE gets when CMD ran (-h).", runStartAt},
	{"cert", "make one run's lab CA, server certificate and key", []string{"cert -ip IP -dir DIR [-key-type ecdsa-p256|rsa-2048]"},
		"IP SAN, key 0600, in DIR outside any git checkout; -check -cert F -key F -ca F verifies a user's own (-h).", noStderr(runCert)},
	{"tls-probe", "what TLS a client negotiates with the server (JSON)", []string{"tls-probe -target IP:PORT -ca FILE [-out FILE]"},
		"The version, cipher and key type, and whether a second connection resumes (-h).", noStderr(runTLSProbe)},
	{"conn-predict", "predict one Phase 4 churn cell from both hosts' settings", []string{"conn-predict FLAGS"},
		"The port wall, when EADDRNOTAVAIL comes (-h: flags).", noStderr(runConnPredict)},
	{"constants", "the constants bash and Go share, KEY=VALUE", []string{"constants [-sh]"},
		"-sh: the text of lib/constants.sh, which bash sources.", noStderr(runConstants)},
	{"sizes", "check a payload size list as the server reads it", []string{"sizes [-key KEY] LIST"},
		"Prints NAME BYTES per size; a bad list is one line naming KEY, exit 2 (-h).", noStderr(runSizes)},
	{"load-plan", "split one HTTP load cell across the client hosts", []string{"load-plan -conns N [-threads N] -host LABEL:CPUS:FD_HARD..."},
		"Each host's connections and load generator threads, and whether its fd limit holds them; KEY=VALUE lines (-h).", noStderr(runLoadPlan)},
	{"tls-warmup", "size a loaded TLS cell's warm-up from a handshake probe", []string{"tls-warmup -probe FILE -conns N [-max-s S]"},
		"FILE: h2load --h1 -n P -c P's text against the server; KEY=VALUE lines: handshakes per second, the warm-up, or why the cell cannot have one (-h).", noStderr(runTLSWarmup)},
	{"nginx-conf", "print one run's nginx configuration and its sizing", []string{"nginx-conf -dir DIR -listen IP:PORT -sizes LIST [flags]"},
		"For SERVER=nginx: the payloads, health paths and TLS, worker and fd sizing from the phase's connection count (-h: flags and rules).", noStderr(runNginxConf)},
	{"lock", "hold one run's locks for as long as the run lives", []string{"lock -pid PID [-wait S] KEY...", "lock -check KEY"},
		"Every KEY's lock or none, seen by every account on the machine (flock in a sticky directory), each naming its holder; busy: the holder named, exit 7 (-h).", runLock},
	{"check-paths", "check the server under test's paths before a run", []string{"check-paths -base URL -dir DIR -path SIZE=PATH:BYTES..."},
		"Each payload fetched twice, the health path once: 200, not chunked, the declared size every time; the headers kept; exit 2 and one line when not (-h).", noStderr(runCheckPaths)},
	{"check-settings", "check a runner's settings before anything starts", []string{"check-settings KEY KIND ORIGIN VALUE..."},
		"Each value against the kind it was declared with, then the rules across settings; one line per finding, exit 2 (-h).", runCheckSettings},
	{"hosts", "the run's host table and CPU sets from its settings", []string{"hosts -lab LAB -clients N [flags]"},
		"Host 0 the server host, 1..N the client hosts, each with its ssh destination, addresses and NIC; the CPUs each side is pinned to; KEY=VALUE lines, or one line and exit 2 for settings that cannot work (-h).", noStderr(runHosts)},
	{"capacity-next", "Phase 5's search: the next step's rate, or the capacity", []string{"capacity-next [SLO flags] [-dir RUN -step NAME...]"},
		"From the steps measured so far (each step's connclient lowrate results of every client host, merged): the next rate (up, down, bisect) or the highest rate that kept the SLO, its bracket and what bounded it; KEY=VALUE lines; bad SLO settings one line, exit 2 (-h).", noStderr(runCapacityNext)},
	{"progress", "a step's k/n and time left; how long earlier runs took", []string{"progress [-what WORD] [-name TEXT] -k K -in S -first S PLAN_S...", "progress -took -lab LAB -profile P -dir DIR... RUNNER..."},
		"Time left: the plan's rest, stretched by how far the steps run so far overran theirs; -took: the newest like run of each runner, for make demo's plan (-h).", noStderr(runProgress)},
	{"h2load-tally", "keep what summarize reads of h2load logs, in their place", []string{"h2load-tally LOG..."},
		"Reads each h2load --log-file (<cell>.h2load.log, or .log.gz) and writes <cell>.h2load.tally.json beside it (temp and rename): the requests by status and the exact distribution of the completed ones' elapsed times, with the log's name, lines, bytes and SHA-256. summarize reads a cell's log where it is there, else its tally, to the same figures; scripts/references.sh keeps the tallies of the committed runs and removes their logs. Nothing is written for a log that cannot be read (exit 1, each named).", runH2loadTally},
	{"history", "one cell's figure across runs, changes tested", []string{"history [-metrics M,M] [-cell TEXT] [-alpha A] [-out DIR] ROOT..."},
		"Every runner's runs under the results roots (a RESULTS_ROOT, or the repository for its committed references), oldest first: per cell and figure a row per run with its commit, kernel, CPU model and server, grouped into runs alike (one commit, the same settings); each group tested against the one before (Mann-Whitney U, two-sided, exact for small n, α = -alpha): p=…, ~ or — (too few values). -out DIR writes DIR/README.md and a chart per figure (gnuplot). Unreadable runs are named and skipped; bad input exits 2.", runHistory},
	{"lines-tally", "keep a raw listing's count, in its place", []string{"lines-tally LISTING..."},
		"Reads each raw listing (an `ss` listing of held connections, <cell>.held.established, or .gz) and writes LISTING.lines.json beside it (temp and rename): its lines that are not blank, with its name, bytes and SHA-256. summarize counts a listing where it is there, else reads its count; scripts/references.sh keeps the counts of the committed runs and removes their listings. Nothing is written for a listing that cannot be read (exit 1, each named).", runLinesTally},
}

// noStderr adapts a command that writes nothing to stderr.
func noStderr(f func([]string, io.Writer) error) func([]string, io.Writer, io.Writer) error {
	return func(args []string, stdout, _ io.Writer) error { return f(args, stdout) }
}

// Commands lists every subcommand's name and one-line summary, in the order
// of csb -h (cmd/csb's doc comment lists the same; its test compares).
func Commands() [][2]string {
	out := make([][2]string, len(commands))
	for i, c := range commands {
		out[i] = [2]string{c.name, c.summary}
	}
	return out
}

// ownHelp: the commands that answer -h themselves, with their flags; the
// others' -h is help, from their row of commands.
var ownHelp = map[string]bool{"c10k-plan": true, "clock": true, "start-at": true, "cert": true, "tls-probe": true,
	"conn-predict": true, "sizes": true, "load-plan": true, "tls-warmup": true, "nginx-conf": true, "lock": true, "check-paths": true,
	"check-settings": true, "hosts": true, "capacity-next": true, "progress": true}

// help is csb NAME -h for a command without its own: its forms and what it
// does.
func (c *command) help() string {
	var b strings.Builder
	for i, u := range c.usage {
		lead := "       csb "
		if i == 0 {
			lead = "Usage: csb "
		}
		b.WriteString(lead + u + "\n")
	}
	text := strings.ToUpper(c.summary[:1]) + c.summary[1:] + ". " + c.more
	b.WriteString("\n" + strings.Join(wrap(text, 76), "\n") + "\n")
	return b.String()
}

func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

const usageHead = `Usage: csb COMMAND [ARGS]

Commands:
`

const usageTail = `
A run whose BASELINE_RUN setting names another run directory of the same
phase gets that comparison appended to its report.

Examples:
  csb report
  csb report -root /tmp/results -out /tmp/results/report
  csb compare 00-iperf3/results/2026-11-30_101500_iperf3-baseline /tmp/r/00-iperf3/2026-12-01_090000_iperf3-baseline
  csb compare -roots -out /tmp/vs.md /tmp/results-csb /tmp/results-nginx
  csb check iperf3 raw/c2s-1.json
  ip -j route get 198.18.0.1 | csb ipj route
  csb summarize 00-iperf3/results/2026-11-30_101500_iperf3-baseline
  csb summarize 0*/results/*/

Exit status: 0 ok, 1 a run directory could not be summarized (or a cell's
raw output could not be parsed, or holds a value below zero the tool never
prints: the run is then marked partial, and its summary and report say which
file and why), or compare of two run directories met a summary.json it
refuses (another schema_version; a figure no tool can produce, such as a
negative rate or latency or a throughput above 1.5x the line rate: named by
file and field), or report or compare -roots found no run it could read (one
it cannot read among others is skipped, named on stderr and in what it
writes, and the status is 0), 2 bad usage. A subcommand's -h, where it has
one, says its own.
`

// usageIndent is the column a command's description starts at in csb -h.
const usageIndent = 21

// usageText is csb -h: the commands table, each with its forms, summary and
// the rest of its description wrapped to 80 columns.
func usageText() string {
	var b strings.Builder
	b.WriteString(usageHead)
	pad := strings.Repeat(" ", usageIndent)
	for i, c := range commands {
		if i > 0 {
			b.WriteString("\n")
		}
		desc := append([]string{c.summary + "."}, wrap(c.more, 80-usageIndent)...)
		for _, form := range c.usage {
			line := "  " + form
			if len(c.usage) == 1 && len(line) < usageIndent-1 {
				b.WriteString(line + strings.Repeat(" ", usageIndent-len(line)) + desc[0] + "\n")
				desc = desc[1:]
				break
			}
			b.WriteString(line + "\n")
		}
		for _, d := range desc {
			b.WriteString(pad + d + "\n")
		}
	}
	b.WriteString(usageTail)
	return b.String()
}

// wrap splits text into lines of at most width characters, at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// runSummarize is csb summarize DIR...: every directory is tried; the
// failures are named on stderr and counted in the error.
func runSummarize(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return fmt.Errorf("%w: summarize needs at least one run directory", errUsage)
	}
	return eachArg(args, "run directories", stdout, stderr, func(dir string) (string, error) {
		if err := Summarize(dir, GeneratedBy); err != nil {
			return "", fmt.Errorf("%s: %w", dir, err)
		}
		return "summarized " + dir, nil
	})
}

// eachArg runs do on every argument, in order: its line on stdout, or its
// error on stderr; the error counts and names the arguments (what they
// are) that failed.
func eachArg(args []string, what string, stdout, stderr io.Writer, do func(string) (string, error)) error {
	var failed []string
	for _, a := range args {
		line, err := do(a)
		if err != nil {
			fmt.Fprintf(stderr, "error: %v\n", err)
			failed = append(failed, a)
			continue
		}
		fmt.Fprintln(stdout, line)
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d %s failed: %s", len(failed), len(args), what, strings.Join(failed, " "))
	}
	return nil
}

// runH2loadTally is csb h2load-tally LOG...: every log is tried; the
// failures are named on stderr and counted in the error.
func runH2loadTally(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return fmt.Errorf("%w: h2load-tally needs at least one h2load log", errUsage)
	}
	return eachArg(args, "h2load logs", stdout, stderr, func(log string) (string, error) {
		out, err := httpphase.WriteH2loadTally(log)
		return "wrote " + out, err
	})
}

// runLinesTally is csb lines-tally LISTING...: as runH2loadTally.
func runLinesTally(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return fmt.Errorf("%w: lines-tally needs at least one listing", errUsage)
	}
	return eachArg(args, "listings", stdout, stderr, func(l string) (string, error) {
		out, err := rundir.WriteLines(l)
		return "wrote " + out, err
	})
}

// runCheck is csb check [-non2xx-max F] KIND FILE.
func runCheck(args []string, _, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	max := fs.String("non2xx-max", "0", "the share of responses that may have an error status (wrk, oha)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: check: %v", errUsage, err)
	}
	args = fs.Args()
	if len(args) != 2 {
		return fmt.Errorf("%w: check needs KIND and FILE", errUsage)
	}
	if read, ok := LoadReaders[args[0]]; ok {
		bound, err := httpphase.Non2xxMax(map[string]string{httpphase.Non2xxKey: *max})
		if err != nil {
			return fmt.Errorf("%w: %v", errBadInput, err)
		}
		l, err := read(args[1])
		if err != nil {
			return err
		}
		var st *httpphase.StatusError
		if err := httpphase.Check(l, bound); errors.As(err, &st) {
			fmt.Fprintf(stderr, "error: %v\n", err)
			return exitCodeError(3)
		}
		return nil
	}
	check, ok := Checks[args[0]]
	if !ok {
		return fmt.Errorf("%w: check: unknown kind %q", errUsage, args[0])
	}
	f, err := os.Open(args[1])
	if err != nil {
		return err
	}
	defer f.Close()
	var st *httpphase.StatusError
	if err := check(f); errors.As(err, &st) {
		fmt.Fprintf(stderr, "error: %v\n", err)
		return exitCodeError(3)
	} else if err != nil {
		return err
	}
	return nil
}
