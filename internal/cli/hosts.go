package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"csbench/internal/hostplan"
)

const hostsUsage = `Usage: csb hosts -lab LAB -clients N [-clients-given] [-client-hosts LIST]
                 [-client-ip IP] [-client-nic NIC] -server-ip IP [-server-nic NIC]
                 [-server-ssh DEST] [-cpu-pin auto|0|1] [-allowed-cpus LIST]

The run's host table (internal/hostplan) from its settings, after the lab
filled in what it implies: host 0 the server host, 1..N the client hosts
(labels client with one, client1..clientN with several), each with its ssh
destination (local: this host), addresses and NIC; the CPUs the server
host's and the client hosts' processes are pinned to (CPU_PIN; auto: the
netns lab on 2 CPUs or more; -allowed-cpus defaults to this process's
Cpus_allowed_list). Prints KEY=VALUE lines: clients, client_ip,
client_nic, cpus.server, cpus.client, host.H.label|dest|addrs|nic. A
combination that cannot work is one line, exit 2.
`

func runHosts(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("hosts", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var s hostplan.Settings
	fs.StringVar(&s.Lab, "lab", "", "")
	fs.IntVar(&s.Clients, "clients", 1, "")
	fs.BoolVar(&s.ClientsGiven, "clients-given", false, "")
	fs.StringVar(&s.ClientHosts, "client-hosts", "", "")
	fs.StringVar(&s.ClientIP, "client-ip", "", "")
	fs.StringVar(&s.ClientNIC, "client-nic", "", "")
	fs.StringVar(&s.ServerIP, "server-ip", "", "")
	fs.StringVar(&s.ServerNIC, "server-nic", "", "")
	fs.StringVar(&s.ServerSSH, "server-ssh", "", "")
	fs.StringVar(&s.CPUPin, "cpu-pin", "auto", "")
	fs.StringVar(&s.AllowedCPUs, "allowed-cpus", "", "")
	help := fs.Bool("h", false, "")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: hosts: %v", errUsage, err)
	}
	if *help {
		fmt.Fprint(stdout, hostsUsage)
		return nil
	}
	if fs.NArg() != 0 || s.Lab == "" {
		return fmt.Errorf("%w: hosts takes -lab and flags only", errUsage)
	}
	if s.AllowedCPUs == "" {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				s.AllowedCPUs = strings.TrimSpace(v)
			}
		}
	}
	t, err := hostplan.Make(s)
	var bad hostplan.Error
	if errors.As(err, &bad) {
		return fmt.Errorf("%w: %s", errBadInput, bad)
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, t.Lines())
	return err
}
