package cli

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"
)

// h2Preface is what an HTTP/2 client sends first: the connection preface
// and an empty SETTINGS frame (RFC 9113, 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00"

// h2Offer asks the server at base (http://IP:PORT or https://IP:PORT)
// for HTTP/2 the way a load generator does: over TLS by ALPN (offering
// h2 and http/1.1, as browsers do), in cleartext with prior knowledge
// (the preface). It returns "h2" or "h2c" when the server speaks HTTP/2,
// else what it offered instead, in words ("http/1.1 (ALPN)", "HTTP/1.1:
// it answered the HTTP/2 preface with \"HTTP/1.1 400 Bad Request\""), and
// ok false. err is a failure to ask at all (no connection, no TLS).
func h2Offer(base string, tc *tls.Config, timeout time.Duration) (offer string, ok bool, err error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", false, fmt.Errorf("base %q: not a URL", base)
	}
	c, err := net.DialTimeout("tcp", u.Host, timeout)
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(timeout)); err != nil {
		return "", false, err
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if tc != nil {
			cfg = tc.Clone()
		}
		cfg.NextProtos = []string{"h2", "http/1.1"}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname() // the certificate is checked against it
		}
		tl := tls.Client(c, cfg)
		if err := tl.Handshake(); err != nil {
			return "", false, err
		}
		switch p := tl.ConnectionState().NegotiatedProtocol; p {
		case "h2":
			return "h2", true, nil
		case "":
			return "no ALPN protocol (HTTP/1.1)", false, nil
		default:
			return p + " only (ALPN)", false, nil
		}
	}
	if _, err := io.WriteString(c, h2Preface); err != nil {
		return "", false, err
	}
	br := bufio.NewReader(c)
	head, err := br.Peek(9)
	if len(head) >= 5 && string(head[:5]) == "HTTP/" {
		line, _ := br.ReadString('\n')
		return fmt.Sprintf("HTTP/1.1 only: it answered the HTTP/2 preface with %q", strings.TrimRight(line, "\r\n")), false, nil
	}
	switch {
	case err == nil && head[3] == 0x4 && head[5]&0x7f == 0 && head[6] == 0 && head[7] == 0 && head[8] == 0:
		return "h2c", true, nil // its SETTINGS frame, on stream 0
	case err == nil:
		return fmt.Sprintf("no HTTP/2: it answered the preface with %q", head), false, nil
	case errors.Is(err, io.EOF):
		return "no HTTP/2: it closed the connection on the preface", false, nil
	}
	return "", false, err
}
