// Package hostplan makes a run's host table from its settings: host 0 the
// server host, hosts 1..N the client hosts (one client the case N = 1),
// each with its label, ssh destination ("local": the runner's own host),
// benchmark addresses and NIC, and the CPU sets the hosts' processes are
// pinned to. Bash reads the table (csb hosts) and never works it out.
package hostplan

import (
	"fmt"
	"strconv"
	"strings"

	"csbench/internal/settings"
)

// MaxClients is the largest number of client hosts.
const MaxClients = settings.MaxClients

// Settings are the values the table is made from, after the lab filled in
// what it implies (SERVER_IP, CLIENT_IP, the NICs, SERVER_SSH).
type Settings struct {
	Lab          string // local | netns | ssh
	Clients      int
	ClientsGiven bool // CLIENTS was set (not its default)
	ClientHosts  string
	ClientIP     string
	ClientNIC    string
	ServerIP     string
	ServerNIC    string
	ServerSSH    string
	CPUPin       string // auto | 0 | 1
	AllowedCPUs  string // this process's Cpus_allowed_list
}

// Host is one row of the table.
type Host struct {
	Label string
	Dest  string   // "local" or an ssh destination
	Addrs []string // benchmark addresses, the first the host's own
	NIC   string
}

// Table is the run's hosts, the server's first, and the CPU sets ("" for
// both: not pinned).
type Table struct {
	Hosts                  []Host
	ServerCPUs, ClientCPUs string
	// ClientIP, ClientNIC: client 1's, as CLIENT_IP and CLIENT_NIC read
	// from now on (LAB=ssh takes them from CLIENT_HOSTS's first entry).
	ClientIP, ClientNIC string
}

// Error is a combination of settings that cannot work: one line saying
// what is wrong and what to set.
type Error string

func (e Error) Error() string { return string(e) }

// NetnsClient is client k's address and NIC in the netns lab: client 1 is
// 198.18.0.2 on csbc0; client k >= 2 is 198.18.<k>.2 on csbc<k-1>
// (lab/netns.sh builds the same, lib/lab.sh's csb_netns_client_ip/_nic).
func NetnsClient(k int) (ip, nic string) {
	if k == 1 {
		return "198.18.0.2", "csbc0"
	}
	return fmt.Sprintf("198.18.%d.2", k), fmt.Sprintf("csbc%d", k-1)
}

// Make builds the table, or says why the settings cannot work.
func Make(s Settings) (*Table, error) {
	t := &Table{ClientIP: s.ClientIP, ClientNIC: s.ClientNIC}
	n := s.Clients
	clients := []Host{{Dest: "local", Addrs: addrs(s.ClientIP), NIC: s.ClientNIC}}
	switch s.Lab {
	case "local":
		if n > 1 || s.ClientHosts != "" {
			set := ""
			if s.ClientHosts != "" {
				set = ", CLIENT_HOSTS set"
			}
			return nil, Error(fmt.Sprintf("LAB=local has one client host, this one (CLIENTS=%d%s): use LAB=netns with CLIENTS=N, or LAB=ssh with CLIENT_HOSTS", n, set))
		}
	case "netns":
		if s.ClientHosts != "" {
			return nil, Error(fmt.Sprintf("CLIENT_HOSTS is set, but LAB=netns makes its client hosts from CLIENTS (1 to %d): leave CLIENT_HOSTS empty", MaxClients))
		}
		for k := 2; k <= n; k++ {
			ip, nic := NetnsClient(k)
			clients = append(clients, Host{Dest: "root@" + ip, Addrs: []string{ip}, NIC: nic})
		}
	case "ssh":
		if s.ClientHosts == "" && n > 1 {
			return nil, Error(fmt.Sprintf("CLIENTS=%d with LAB=ssh needs CLIENT_HOSTS listing them: space-separated entries DEST/ADDR[+ADDR...]/NIC, DEST an ssh destination or local, such as 'local/192.0.2.11/enp1s0 me@c2/192.0.2.12/enp1s0'", n))
		}
		if s.ClientHosts != "" {
			var err error
			if clients, err = fromList(s, t); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("unknown lab %q", s.Lab)
	}
	server := Host{Label: "server", Dest: "local", Addrs: addrs(s.ServerIP), NIC: s.ServerNIC}
	if s.Lab != "local" {
		server.Dest = s.ServerSSH
	}
	t.Hosts = append([]Host{server}, clients...)
	for k := 1; k < len(t.Hosts); k++ {
		t.Hosts[k].Label = "client" + strconv.Itoa(k)
	}
	if len(clients) == 1 {
		t.Hosts[1].Label = "client"
	}
	return t, t.pin(s)
}

func addrs(ip string) []string {
	if ip == "" {
		return nil
	}
	return []string{ip}
}

// fromList: the client hosts of CLIENT_HOSTS (LAB=ssh), each entry
// DEST/ADDR[+ADDR...]/NIC (checked by internal/settings), the first local.
func fromList(s Settings, t *Table) ([]Host, error) {
	var hosts []Host
	for m, e := range strings.Fields(s.ClientHosts) {
		parts := strings.Split(e, "/")
		if len(parts) != 3 {
			return nil, Error(fmt.Sprintf("CLIENT_HOSTS: entry %d (%s) is not DEST/ADDR[+ADDR...]/NIC", m+1, e))
		}
		dest := parts[0]
		if m == 0 && dest != "local" {
			return nil, Error(fmt.Sprintf("CLIENT_HOSTS: the first entry must be local (the runner runs on client 1), got %s", dest))
		}
		if m > 0 && dest == "local" {
			return nil, Error(fmt.Sprintf("CLIENT_HOSTS: entry %d is local: only the first client is this host; give its ssh destination", m+1))
		}
		hosts = append(hosts, Host{Dest: dest, Addrs: strings.Split(parts[1], "+"), NIC: parts[2]})
	}
	m := len(hosts)
	if m > MaxClients {
		return nil, Error(fmt.Sprintf("CLIENT_HOSTS lists %d hosts: at most %d", m, MaxClients))
	}
	if s.ClientsGiven && s.Clients != m {
		return nil, Error(fmt.Sprintf("CLIENTS=%d but CLIENT_HOSTS lists %d hosts: make them agree (or leave CLIENTS unset)", s.Clients, m))
	}
	first := hosts[0].Addrs[0]
	if (s.ClientIP != "" && s.ClientIP != first) || (s.ClientNIC != "" && s.ClientNIC != hosts[0].NIC) {
		return nil, Error(fmt.Sprintf("CLIENT_IP=%s CLIENT_NIC=%s disagree with CLIENT_HOSTS's first entry (%s on %s): leave them empty or make them agree", s.ClientIP, s.ClientNIC, first, hosts[0].NIC))
	}
	t.ClientIP, t.ClientNIC = first, hosts[0].NIC
	return hosts, nil
}

// pin: with CPU_PIN on (auto: the netns lab on 2 CPUs or more) the server
// host gets the first allowed CPU and the client hosts the rest.
func (t *Table) pin(s Settings) error {
	cpus, err := ExpandCPUs(s.AllowedCPUs)
	if err != nil {
		return err
	}
	on := false
	switch s.CPUPin {
	case "1":
		if s.Lab == "ssh" {
			return Error("CPU_PIN=1 with LAB=ssh: each host is its own machine with its own CPUs; set CPU_PIN=0 (or auto), and SERVER_CPUS to pin the server under test")
		}
		if len(cpus) < 2 {
			return Error(fmt.Sprintf("CPU_PIN=1 needs at least 2 CPUs, this process may use %s: set CPU_PIN=0", s.AllowedCPUs))
		}
		on = true
	case "auto":
		on = s.Lab == "netns" && len(cpus) >= 2
	}
	if on {
		t.ServerCPUs = cpus[0]
		t.ClientCPUs = strings.Join(cpus[1:], ",")
	}
	return nil
}

// ExpandCPUs: the CPUs of a list such as 0-3,6, in order.
func ExpandCPUs(list string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(strings.TrimSpace(list), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU or a range", list, part)
		}
		for c := a; c <= b; c++ {
			out = append(out, strconv.Itoa(c))
		}
	}
	return out, nil
}

// Lines is the table as the KEY=VALUE lines bash reads: clients=N,
// client_ip, client_nic, cpus.server, cpus.client, and per host H
// host.H.label, .dest, .addrs (comma-separated), .nic.
func (t *Table) Lines() string {
	var b strings.Builder
	fmt.Fprintf(&b, "clients=%d\nclient_ip=%s\nclient_nic=%s\ncpus.server=%s\ncpus.client=%s\n",
		len(t.Hosts)-1, t.ClientIP, t.ClientNIC, t.ServerCPUs, t.ClientCPUs)
	for h, x := range t.Hosts {
		fmt.Fprintf(&b, "host.%d.label=%s\nhost.%d.dest=%s\nhost.%d.addrs=%s\nhost.%d.nic=%s\n",
			h, x.Label, h, x.Dest, h, strings.Join(x.Addrs, ","), h, x.NIC)
	}
	return b.String()
}
