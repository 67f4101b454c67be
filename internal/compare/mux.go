package compare

import (
	"regexp"
	"strconv"
)

// MuxPair is an HTTP/1.1 cell and an HTTP/2 cell of the same payload (in
// Phase 3 the same scenario, count and payload or rate) with the same
// requests in flight: the HTTP/1.1 cell's connections, the HTTP/2 cell's
// connections × streams per connection.
type MuxPair struct {
	H1, H2 string // the cells' names without their repetition suffix
	// Conns and Streams are the HTTP/2 cell's connections and streams per
	// connection as its name gives them. Conns is 0 where the name does
	// not say (Phase 1's <size>-h2: the HTTP/1.1 cell's connections).
	Conns, Streams int
}

var (
	// <h1>-h2 and <h1>-h2-m<S>: Phase 1 (<size>-h2) and Phase 3
	// (idle-<n>-h2, active-<n>-<size>-h2-m<S>): the HTTP/1.1 name and
	// -h2, with the same requests in flight (Phase 3: n streams over n/S
	// connections).
	h2Suffix = regexp.MustCompile(`^(.+)-h2(?:-m([0-9]+))?$`)
	// <size>-c<C>-m<S>: Phase 2, whose HTTP/1.1 cell is <size>-c<C×S>.
	h2Matrix = regexp.MustCompile(`^(.+)-c([0-9]+)-m([0-9]+)$`)
	// Phase 3's names start with the scenario and the connection count:
	// idle-10k, active-1m-1k (the k and m of the CONNS setting).
	c10kCount = regexp.MustCompile(`^[a-z]+-([0-9]+)([km]?)(?:-|$)`)
)

// h2Key reads an HTTP/2 cell's name: the name of the HTTP/1.1 cell it
// pairs with, and its connections (0: the name does not say) and streams
// per connection. ok is false for a name that is not an HTTP/2 cell's.
func h2Key(name string) (h1 string, conns, streams int, ok bool) {
	if m := h2Suffix.FindStringSubmatch(name); m != nil {
		streams = 1
		if m[2] != "" {
			if streams, ok = posInt(m[2]); !ok {
				return "", 0, 0, false
			}
		}
		if n, ok := c10kConns(m[1]); ok && n%streams == 0 {
			conns = n / streams
		}
		return m[1], conns, streams, true
	}
	if m := h2Matrix.FindStringSubmatch(name); m != nil {
		c, okc := posInt(m[2])
		s, oks := posInt(m[3])
		if !okc || !oks {
			return "", 0, 0, false
		}
		return m[1] + "-c" + strconv.Itoa(c*s), c, s, true
	}
	return "", 0, 0, false
}

// c10kConns is the connection count a Phase 3 cell's name starts with.
func c10kConns(name string) (int, bool) {
	m := c10kCount.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	n, ok := posInt(m[1])
	switch m[2] {
	case "k":
		n *= 1000
	case "m":
		n *= 1000000
	}
	return n, ok
}

func posInt(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n > 0 && n <= 1e9
}

// PairMux pairs HTTP/1.1 cells with HTTP/2 cells (base names, BaseName):
// each name of h1 that is not an HTTP/2 cell's with every name of h2 that
// is one and pairs with it (h2Key), in h1's order, then h2's. One cell
// with several HTTP/2 partners (1k-c64 with 1k-c16-m4 and 1k-c64-m1) is
// in several pairs. h1 and h2 may be the same list (a run that loaded
// over both versions).
func PairMux(h1, h2 []string) []MuxPair {
	var out []MuxPair
	for _, a := range h1 {
		if _, _, _, isH2 := h2Key(a); isH2 {
			continue
		}
		for _, b := range h2 {
			if key, c, s, ok := h2Key(b); ok && key == a {
				out = append(out, MuxPair{H1: a, H2: b, Conns: c, Streams: s})
			}
		}
	}
	return out
}
