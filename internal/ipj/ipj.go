// Package ipj reads the JSON that iproute2 prints with -j (ip -j route get,
// ip -j addr show, ip -j netns list), so the runners' route guard, address
// checks and namespace checks compare fields, never regexes over ip's text.
//
// Only the fields the checks need are declared; iproute2 adds others over
// releases and those are ignored. Empty input (ip prints nothing for an
// unreachable destination or, on some releases, when there is no namespace)
// is an empty list.
package ipj

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Route is one entry of `ip -j route get DST`.
type Route struct {
	Dst     string `json:"dst"`
	Dev     string `json:"dev"`
	PrefSrc string `json:"prefsrc"`
	Gateway string `json:"gateway"`
}

// Addr is one address of an interface in `ip -j addr show`.
type Addr struct {
	Family    string `json:"family"`
	Local     string `json:"local"`
	PrefixLen int    `json:"prefixlen"`
}

// Link is one interface of `ip -j addr show`.
type Link struct {
	IfName   string `json:"ifname"`
	AddrInfo []Addr `json:"addr_info"`
}

// Netns is one entry of `ip -j netns list`.
type Netns struct {
	Name string `json:"name"`
}

func decode[T any](r io.Reader, what string) ([]T, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil
	}
	var out []T
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: not the JSON array ip -j prints: %v", what, err)
	}
	return out, nil
}

// ParseRoutes reads `ip -j route get` output.
func ParseRoutes(r io.Reader) ([]Route, error) { return decode[Route](r, "ip -j route get") }

// ParseLinks reads `ip -j addr show` output.
func ParseLinks(r io.Reader) ([]Link, error) { return decode[Link](r, "ip -j addr show") }

// ParseNetns reads `ip -j netns list` output.
func ParseNetns(r io.Reader) ([]Netns, error) { return decode[Netns](r, "ip -j netns list") }

// Holders returns the interfaces that carry the address ip, in ip's order.
func Holders(links []Link, ip string) []string {
	var out []string
	for _, l := range links {
		for _, a := range l.AddrInfo {
			if a.Local == ip {
				out = append(out, l.IfName)
				break
			}
		}
	}
	return out
}
