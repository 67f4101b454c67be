package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"csbench/internal/atomicfile"
	"csbench/internal/tlscert"
	"csbench/internal/tlsdial"
)

const certUsage = `Usage: csb cert -ip IP -dir DIR [-key-type T] [-days N]
       csb cert -check -ip IP -cert FILE -key FILE -ca FILE

Make the TLS material of one run: a CA and a server certificate for IP (an
IP SAN), with keys of type T (ecdsa-p256, the default, or rsa-2048), written
into DIR (which must exist and lie outside any git checkout): ca.pem, the CA
the clients trust; cert.pem, the server certificate; key.pem, its key (mode
0600). The CA's key is never written: it signs the one certificate and is
dropped. -check verifies material a user brings instead: the key readable,
of a supported type and the certificate's, the certificate valid for IP
against the CA in -ca. It prints the certificate's facts as JSON.

Exit status: 0 ok, 2 bad usage or material (one line saying what and how to
fix it), 1 anything else.

Examples:
  csb cert -ip 198.18.0.1 -dir /tmp/csb-run.X/bin/tls
  csb cert -ip 198.18.0.1 -key-type rsa-2048 -dir /tmp/csb-run.X/bin/tls
  csb cert -check -ip 198.18.0.1 -cert my.crt -key my.key -ca my-ca.crt
`

func runCert(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("cert", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ipS := fs.String("ip", "", "")
	dir := fs.String("dir", "", "")
	kt := fs.String("key-type", tlscert.ECDSAP256, "")
	days := fs.Int("days", int(tlscert.DefaultValidity/(24*time.Hour)), "")
	check := fs.Bool("check", false, "")
	certF := fs.String("cert", "", "")
	keyF := fs.String("key", "", "")
	caF := fs.String("ca", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, certUsage)
			return nil
		}
		return fmt.Errorf("%w: cert: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: cert: unexpected argument %q", errUsage, fs.Arg(0))
	}
	ip, err := netip.ParseAddr(*ipS)
	if err != nil || ip.Zone() != "" {
		return fmt.Errorf("%w: cert: -ip %q is not an IP literal (the server's benchmark address, e.g. 198.18.0.1)", errUsage, *ipS)
	}
	ip = ip.Unmap()
	var info tlscert.Info
	if *check {
		if *certF == "" || *keyF == "" || *caF == "" {
			return fmt.Errorf("%w: cert -check needs -cert, -key and -ca", errUsage)
		}
		info, err = tlscert.Check(*certF, *keyF, *caF, ip)
	} else {
		if *dir == "" {
			return fmt.Errorf("%w: cert: -dir is required (where ca.pem, cert.pem and key.pem go)", errUsage)
		}
		if *days < 1 || *days > 366 {
			return fmt.Errorf("%w: cert: -days %d: want 1 to 366", errUsage, *days)
		}
		var b *tlscert.Bundle
		b, err = tlscert.Make(ip, *kt, time.Now(), time.Duration(*days)*24*time.Hour)
		if err == nil {
			err = tlscert.WriteDir(*dir, b)
		}
		if err == nil {
			info, err = tlscert.Check(*dir+"/"+tlscert.CertFile, *dir+"/"+tlscert.KeyFile, *dir+"/"+tlscert.CAFile, ip)
		}
	}
	var bad *tlscert.BadInputError
	if errors.As(err, &bad) {
		return fmt.Errorf("%w: %s", errBadInput, bad.Msg)
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", b)
	return err
}

const probeUsage = `Usage: csb tls-probe -target IP:PORT -ca FILE [-out FILE]

Open two TLS connections to IP:PORT (the second offering the first's
session), trusting only the CA in FILE, and print (or write to -out, by
temp-and-rename) a JSON document: the TLS version, cipher suite, ALPN and
server key type negotiated, the connect and handshake times, and whether the
second handshake resumed (the server issues session tickets). Exit 2 when the
certificate does not verify.
`

func runTLSProbe(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("tls-probe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	target := fs.String("target", "", "")
	ca := fs.String("ca", "", "")
	out := fs.String("out", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, probeUsage)
			return nil
		}
		return fmt.Errorf("%w: tls-probe: %v", errUsage, err)
	}
	ap, err := netip.ParseAddrPort(*target)
	if err != nil || *ca == "" {
		return fmt.Errorf("%w: tls-probe needs -target IP:PORT and -ca FILE", errUsage)
	}
	cfg, err := tlsdial.ClientConfig(*ca, ap.Addr().Unmap(), true)
	if err != nil {
		return fmt.Errorf("%w: tls-probe: %v", errBadInput, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := &net.Dialer{}
	p := tlscert.Probe{SchemaVersion: tlscert.ProbeSchemaVersion, Document: "tls-probe", Target: ap.String(), Tool: "csb tls-probe (Go crypto/tls)"}
	for i := 0; i < 2; i++ {
		c, _, tm, err := tlsdial.Dial(ctx, d, ap.String(), cfg, 5*time.Second)
		if err != nil {
			return fmt.Errorf("%w: TLS to %s failed: %v", errBadInput, ap, err)
		}
		// A round trip lets TLS 1.3's tickets (sent after the handshake) arrive.
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "HEAD / HTTP/1.1\r\nHost: "+ap.String()+"\r\nConnection: close\r\n\r\n")
		io.Copy(io.Discard, c)
		st := tlsdial.StateOf(c.ConnectionState())
		c.Close()
		if i == 0 {
			p.First, p.ConnectMs, p.HandshakeMs = st, ms(tm.Connect), ms(tm.Handshake)
		} else {
			p.Second = st
			if st.Resumed {
				v := ms(tm.Handshake)
				p.ResumedMs = &v
			}
		}
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if *out != "" {
		return atomicfile.Write(*out, b, 0o644)
	}
	_, err = stdout.Write(b)
	return err
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 }
