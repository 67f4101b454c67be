package hostplan

import (
	"strings"
	"testing"
)

func TestMake(t *testing.T) {
	for _, c := range []struct {
		name string
		s    Settings
		want string // Lines(), or the error's start
	}{
		{"local", Settings{Lab: "local", Clients: 1, ClientIP: "127.0.0.1", ClientNIC: "lo", ServerIP: "127.0.0.1", ServerNIC: "lo", CPUPin: "auto", AllowedCPUs: "0-1"},
			"clients=1\nclient_ip=127.0.0.1\nclient_nic=lo\ncpus.server=\ncpus.client=\n" +
				"host.0.label=server\nhost.0.dest=local\nhost.0.addrs=127.0.0.1\nhost.0.nic=lo\n" +
				"host.1.label=client\nhost.1.dest=local\nhost.1.addrs=127.0.0.1\nhost.1.nic=lo\n"},
		{"netns two clients, pinned", Settings{Lab: "netns", Clients: 2, ClientIP: "198.18.0.2", ClientNIC: "csbc0", ServerIP: "198.18.0.1", ServerNIC: "csbs0", ServerSSH: "root@198.18.0.1", CPUPin: "auto", AllowedCPUs: "0-1"},
			"clients=2\nclient_ip=198.18.0.2\nclient_nic=csbc0\ncpus.server=0\ncpus.client=1\n" +
				"host.0.label=server\nhost.0.dest=root@198.18.0.1\nhost.0.addrs=198.18.0.1\nhost.0.nic=csbs0\n" +
				"host.1.label=client1\nhost.1.dest=local\nhost.1.addrs=198.18.0.2\nhost.1.nic=csbc0\n" +
				"host.2.label=client2\nhost.2.dest=root@198.18.2.2\nhost.2.addrs=198.18.2.2\nhost.2.nic=csbc1\n"},
		{"ssh list", Settings{Lab: "ssh", Clients: 1, ClientHosts: "local/192.0.2.2/eth0 me@c2/192.0.2.3+192.0.2.4/eth1", ServerIP: "192.0.2.1", ServerSSH: "root@s", CPUPin: "auto", AllowedCPUs: "0-3"},
			"clients=2\nclient_ip=192.0.2.2\nclient_nic=eth0\ncpus.server=\ncpus.client=\n" +
				"host.0.label=server\nhost.0.dest=root@s\nhost.0.addrs=192.0.2.1\nhost.0.nic=\n" +
				"host.1.label=client1\nhost.1.dest=local\nhost.1.addrs=192.0.2.2\nhost.1.nic=eth0\n" +
				"host.2.label=client2\nhost.2.dest=me@c2\nhost.2.addrs=192.0.2.3,192.0.2.4\nhost.2.nic=eth1\n"},
		{"CPU_PIN=1 on four CPUs", Settings{Lab: "local", Clients: 1, CPUPin: "1", AllowedCPUs: "0-2,5"}, "clients=1\nclient_ip=\nclient_nic=\ncpus.server=0\ncpus.client=1,2,5\n"},
		{"local, two", Settings{Lab: "local", Clients: 2}, "LAB=local has one client host, this one (CLIENTS=2)"},
		{"netns with a list", Settings{Lab: "netns", Clients: 1, ClientHosts: "local/1.2.3.4/e"}, "CLIENT_HOSTS is set, but LAB=netns"},
		{"ssh two, no list", Settings{Lab: "ssh", Clients: 2}, "CLIENTS=2 with LAB=ssh needs CLIENT_HOSTS"},
		{"ssh first not local", Settings{Lab: "ssh", Clients: 1, ClientHosts: "me@c1/1.2.3.4/e local/1.2.3.5/e"}, "CLIENT_HOSTS: the first entry must be local"},
		{"ssh second local", Settings{Lab: "ssh", Clients: 1, ClientHosts: "local/1.2.3.4/e local/1.2.3.5/e"}, "CLIENT_HOSTS: entry 2 is local"},
		{"ssh count disagrees", Settings{Lab: "ssh", Clients: 3, ClientsGiven: true, ClientHosts: "local/1.2.3.4/e"}, "CLIENTS=3 but CLIENT_HOSTS lists 1 hosts"},
		{"ssh ip disagrees", Settings{Lab: "ssh", Clients: 1, ClientIP: "1.2.3.9", ClientHosts: "local/1.2.3.4/e"}, "CLIENT_IP=1.2.3.9 CLIENT_NIC= disagree"},
		{"pin on ssh", Settings{Lab: "ssh", Clients: 1, CPUPin: "1", AllowedCPUs: "0-1"}, "CPU_PIN=1 with LAB=ssh"},
		{"pin on one CPU", Settings{Lab: "netns", Clients: 1, CPUPin: "1", AllowedCPUs: "3"}, "CPU_PIN=1 needs at least 2 CPUs, this process may use 3"},
		{"auto on one CPU", Settings{Lab: "netns", Clients: 1, CPUPin: "auto", AllowedCPUs: "3"}, "clients=1\nclient_ip=\nclient_nic=\ncpus.server=\ncpus.client=\n"},
	} {
		tab, err := Make(c.s)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = tab.Lines()
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}

func TestNetnsClient(t *testing.T) {
	for k, want := range map[int]string{1: "198.18.0.2 csbc0", 2: "198.18.2.2 csbc1", 8: "198.18.8.2 csbc7"} {
		ip, nic := NetnsClient(k)
		if ip+" "+nic != want {
			t.Errorf("NetnsClient(%d) = %s %s, want %s", k, ip, nic, want)
		}
	}
}
