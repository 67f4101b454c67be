// Package tlsdial is TLS dialing, kept apart so that any scenario (idle,
// lowrate, a connection churn, csb's certificate check) opens a TLS
// connection the same way: the TCP connect and the TLS handshake timed
// separately, the lab CA trusted, the server's IP verified
// against the certificate's IP SAN, full or resumed handshakes as asked.
package tlsdial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"csbench/internal/tlscert"
)

// ClientConfig is the client side of every TLS scenario: the CA in
// caFile is the only root trusted; the certificate must name ip (an IP SAN);
// HTTP/1.1 is offered by ALPN. With resume, connections share one session
// cache, so every handshake after the first that got a ticket resumes
// (TLS 1.3 PSK or a TLS 1.2 ticket); without, every handshake is full.
func ClientConfig(caFile string, ip netip.Addr, resume bool) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("-tls-ca %s holds no PEM certificate", caFile)
	}
	cfg := &tls.Config{
		RootCAs:    pool,
		ServerName: ip.String(), // an IP: not sent as SNI, verified against the IP SANs
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
	}
	if resume {
		cfg.ClientSessionCache = tls.NewLRUClientSessionCache(1)
	}
	return cfg, nil
}

// Timing is one connection's setup, each step apart.
type Timing struct {
	Connect   time.Duration // the TCP connect (SYN to established)
	Handshake time.Duration // the TLS handshake on the established connection
	Resumed   bool          // the handshake resumed a session (no certificate sent)
}

// Handshake runs the client handshake on an established connection c,
// bounded by timeout (0: none) and ctx. On failure c is closed.
func Handshake(ctx context.Context, c net.Conn, cfg *tls.Config, timeout time.Duration) (*tls.Conn, time.Duration, error) {
	tc := tls.Client(c, cfg)
	hctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		hctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	t0 := time.Now()
	err := tc.HandshakeContext(hctx)
	d := time.Since(t0)
	if err != nil {
		c.Close()
		return nil, d, err
	}
	return tc, d, nil
}

// Dial connects to addr with d and runs the handshake: the connection,
// the underlying TCP connection (for socket options and non-blocking peeks)
// and both steps' times.
func Dial(ctx context.Context, d *net.Dialer, addr string, cfg *tls.Config, timeout time.Duration) (*tls.Conn, *net.TCPConn, Timing, error) {
	var tm Timing
	t0 := time.Now()
	c, err := d.DialContext(ctx, "tcp", addr)
	tm.Connect = time.Since(t0)
	if err != nil {
		return nil, nil, tm, err
	}
	tc, hs, err := Handshake(ctx, c, cfg, timeout)
	tm.Handshake = hs
	if err != nil {
		return nil, nil, tm, err
	}
	tm.Resumed = tc.ConnectionState().DidResume
	return tc, c.(*net.TCPConn), tm, nil
}

// StateOf describes a completed handshake (tlscert.State).
func StateOf(cs tls.ConnectionState) tlscert.State { return tlscert.StateOf(cs) }
