package cli

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

func runIPJFile(t *testing.T, file string, args ...string) (string, error) {
	t.Helper()
	data, err := os.ReadFile("../ipj/testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	old := stdin
	stdin = bytes.NewReader(data)
	defer func() { stdin = old }()
	var out bytes.Buffer
	err = runIPJ(args, &out)
	return out.String(), err
}

func TestIPJ(t *testing.T) {
	for _, tc := range []struct {
		file string
		args []string
		want string
	}{
		{"route-get-netns.json", []string{"route"}, "csbc0\t198.18.0.2\n"},
		{"route-get-host-default.json", []string{"route"}, "eth0\t192.0.2.2\n"},
		{"addr-server-netns.json", []string{"holders", "198.18.0.1"}, "csbs0\n"},
		{"addr-client-netns.json", []string{"holders", "198.18.0.1"}, ""},
		{"netns-list.json", []string{"netns"}, "hinf-srv\ncsb-srv\nhinf-cli\ncsb-cli\n"},
	} {
		got, err := runIPJFile(t, tc.file, tc.args...)
		if err != nil || got != tc.want {
			t.Errorf("ipj %v < %s = %q, %v; want %q", tc.args, tc.file, got, err, tc.want)
		}
	}
}

func TestIPJErrors(t *testing.T) {
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader("")
	if err := runIPJ([]string{"route"}, &bytes.Buffer{}); !errors.Is(err, errNoRoute) {
		t.Errorf("empty route: got %v, want errNoRoute", err)
	}
	for _, args := range [][]string{nil, {"bogus"}, {"holders"}, {"route", "x"}} {
		if err := runIPJ(args, &bytes.Buffer{}); !errors.Is(err, errUsage) {
			t.Errorf("ipj %v: got %v, want a usage error", args, err)
		}
	}
}

// The route guard's three refusals and its pass, on real ip -j route get
// output (netns: csbc0 from 198.18.0.2) and on ip's error text.
func TestRouteGuard(t *testing.T) {
	base := []string{"route-guard", "-who", "client", "-server-ip", "198.18.0.1", "-nic-is", "CLIENT_NIC=X", "-addr-is", "CLIENT_IP=Y"}
	for _, tc := range []struct {
		file string
		args []string
		want string // "" passes
	}{
		{"route-get-netns.json", []string{"-nic", "csbc0", "-addrs", "198.18.0.2"}, ""},
		{"route-get-netns.json", []string{"-nic", "csbc0", "-addrs", "198.18.0.9,198.18.0.2"}, ""},
		{"route-get-netns.json", []string{"-nic", "eth0"}, "on client, traffic to SERVER_IP=198.18.0.1 would leave through csbc0, not CLIENT_NIC=X: fix the route or set the NIC and SERVER_IP to the benchmark network (ip route get 198.18.0.1: dev csbc0 src 198.18.0.2)"},
		{"route-get-netns.json", []string{"-nic", "csbc0", "-addrs", "198.18.0.9"}, "on client, traffic to SERVER_IP=198.18.0.1 would come from 198.18.0.2 on csbc0, not CLIENT_IP=Y: set it to the address on csbc0"},
		{"netns-list.json", nil, "on client, no route to SERVER_IP=198.18.0.1 (ip route get: "},
	} {
		_, err := runIPJFile(t, tc.file, append(base, tc.args...)...)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %v: %v, want a pass", tc.file, tc.args, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s %v: %v, want %q", tc.file, tc.args, err, tc.want)
		}
	}
}
