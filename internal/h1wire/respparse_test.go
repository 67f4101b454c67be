package h1wire

import (
	"strconv"
	"strings"
	"testing"
)

// parsePieces feeds pieces to a fresh parser as reads would return them,
// then the end of the stream if the response is not complete by then; it
// returns the status, keep-alive, the error and how many bytes it took.
func parsePieces(pieces []string) (status int, keepAlive bool, err error, took int) {
	var p Parser
	p.Reset()
	for _, piece := range pieces {
		n, done, err := p.Feed([]byte(piece))
		took += n
		if err != nil {
			return p.head.status, false, err, took
		}
		if done {
			return p.head.status, p.head.keepAlive, nil, took
		}
	}
	if done, err := p.EOF(); !done {
		return p.head.status, false, err, took
	}
	return p.head.status, p.head.keepAlive, nil, took
}

// TestRespParserAgrees: on every response ReadResponse is tested with,
// split at every byte into two reads and also fed one byte a read, the
// incremental parser comes to the same status, keep-alive, error cause and
// end of the response.
func TestRespParserAgrees(t *testing.T) {
	for _, c := range responseCases {
		splits := [][]string{{c.in}}
		for i := 0; i < len(c.in); i++ {
			splits = append(splits, []string{c.in[:i], c.in[i:]})
		}
		bytewise := make([]string, len(c.in))
		for i := range c.in {
			bytewise[i] = c.in[i : i+1]
		}
		splits = append(splits, bytewise)
		for k, pieces := range splits {
			status, keep, err, took := parsePieces(pieces)
			where := func() string {
				if k == len(splits)-1 {
					return "byte by byte"
				}
				return "split " + strconv.Itoa(k-1)
			}
			if got := classify(err); got != c.err {
				t.Fatalf("%s (%s): error %v (cause %q), want cause %q", c.name, where(), err, got, c.err)
			}
			if status != c.status {
				t.Fatalf("%s (%s): status %d, want %d", c.name, where(), status, c.status)
			}
			if err == nil {
				if keep != c.keepAlive {
					t.Fatalf("%s (%s): keepAlive %v, want %v", c.name, where(), keep, c.keepAlive)
				}
				if rest := c.in[took:]; rest != c.rest {
					t.Fatalf("%s (%s): left %q, want %q", c.name, where(), rest, c.rest)
				}
			}
		}
	}
}

// TestRespParserReuse: one parser reads response after response (reset in
// between), a split head among them.
func TestRespParserReuse(t *testing.T) {
	var p Parser
	resp := "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"
	for i := 0; i < 3; i++ {
		p.Reset()
		cut := 10 + i*7
		n1, done, err := p.Feed([]byte(resp[:cut]))
		if err != nil || done || n1 != cut {
			t.Fatalf("round %d: first piece took %d done %v err %v", i, n1, done, err)
		}
		n2, done, err := p.Feed([]byte(resp[cut:]))
		if err != nil || !done || n1+n2 != len(resp) {
			t.Fatalf("round %d: second piece took %d done %v err %v", i, n2, done, err)
		}
	}
}

// TestRespParserLongHead: a head longer than MaxHead is a bad response,
// whole or split.
func TestRespParserLongHead(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\n" + strings.Repeat("X-Pad: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n", 200) + "Content-Length: 0\r\n\r\n"
	for _, pieces := range [][]string{{head}, {head[:100], head[100:]}} {
		_, _, err, _ := parsePieces(pieces)
		if classify(err) != causeBadResponse {
			t.Errorf("%d pieces: %v, want bad_response", len(pieces), err)
		}
	}
}

// TestRespParserAllocs: a response in one read, and a head split across
// two reads once the parser's buffer exists, allocate nothing.
func TestRespParserAllocs(t *testing.T) {
	var p Parser
	resp := []byte(cannedOK)
	p.Reset()
	p.Feed(resp[:5]) // grows acc once
	p.Feed(resp[5:])
	allocs := testing.AllocsPerRun(1000, func() {
		p.Reset()
		if _, done, err := p.Feed(resp); !done || err != nil {
			t.Fatal(done, err)
		}
		p.Reset()
		p.Feed(resp[:20])
		if _, done, err := p.Feed(resp[20:]); !done || err != nil {
			t.Fatal(done, err)
		}
	})
	if allocs != 0 {
		t.Errorf("Parser allocates %.1f times per two responses, want 0", allocs)
	}
}

func BenchmarkRespParser(b *testing.B) {
	var p Parser
	resp := []byte(cannedOK)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		p.Reset()
		if _, done, err := p.Feed(resp); !done || err != nil {
			b.Fatal(done, err)
		}
	}
}
