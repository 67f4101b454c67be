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
