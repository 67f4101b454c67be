package ipj

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestParseRoutes(t *testing.T) {
	for _, tc := range []struct {
		file string
		want Route
	}{
		{"route-get-netns.json", Route{Dst: "198.18.0.1", Dev: "csbc0", PrefSrc: "198.18.0.2"}},
		{"route-get-loopback.json", Route{Dst: "127.0.0.1", Dev: "lo", PrefSrc: "127.0.0.1"}},
		{"route-get-host-default.json", Route{Dst: "198.18.0.1", Dev: "eth0", PrefSrc: "192.0.2.2", Gateway: "192.0.2.1"}},
	} {
		got, err := ParseRoutes(open(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: got %+v, want [%+v]", tc.file, got, tc.want)
		}
	}
}

func TestEmptyIsNoEntry(t *testing.T) {
	got, err := ParseRoutes(strings.NewReader("\n"))
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no route, no error", got, err)
	}
}

func TestBadJSON(t *testing.T) {
	_, err := ParseRoutes(strings.NewReader("198.18.0.1 dev eth0 src 192.0.2.2 uid 0"))
	if err == nil || !strings.Contains(err.Error(), "ip -j route get") {
		t.Fatalf("got %v, want an error naming ip -j route get", err)
	}
}

func TestHolders(t *testing.T) {
	for _, tc := range []struct {
		file, ip string
		want     []string
	}{
		{"addr-server-netns.json", "198.18.0.1", []string{"csbs0"}},
		{"addr-server-netns.json", "127.0.0.1", []string{"lo"}},
		{"addr-server-netns.json", "::1", []string{"lo"}},
		{"addr-server-netns.json", "198.18.0.2", nil},
		{"addr-client-netns.json", "198.18.0.2", []string{"csbc0"}},
		{"addr-empty-netns.json", "127.0.0.1", nil},
	} {
		links, err := ParseLinks(open(t, tc.file))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := Holders(links, tc.ip); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Holders(%s) = %v, want %v", tc.file, tc.ip, got, tc.want)
		}
	}
}

func TestParseNetns(t *testing.T) {
	got, err := ParseNetns(open(t, "netns-list.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Netns{{"hinf-srv"}, {"csb-srv"}, {"hinf-cli"}, {"csb-cli"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
