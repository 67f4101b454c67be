package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"csbench/internal/tlscert"
)

// TLSSettings is the server's TLS: one certificate, tickets on or off.
type TLSSettings struct {
	Cert    tls.Certificate
	KeyType string // ecdsa-p256 or rsa-2048 (tlscert.KeyTypes)
	Tickets bool
	SHA256  string // of the leaf certificate
}

// TLSInfo is the "tls" object of the listening line: what the server offers
// (what a client negotiated is the client's to report).
type TLSInfo struct {
	MinVersion  string `json:"min_version"`
	MaxVersion  string `json:"max_version"`
	KeyType     string `json:"key_type"`
	Tickets     bool   `json:"session_tickets"`
	ALPN        string `json:"alpn"` // offered, in preference order: "http/1.1", "h2,http/1.1" or "h2"
	CertSHA256  string `json:"cert_sha256"`
	CertExpires string `json:"cert_not_after"`
}

func (t *TLSSettings) info(alpn []string) *TLSInfo {
	if t == nil {
		return nil
	}
	d := tlscert.Describe(t.Cert.Leaf)
	return &TLSInfo{MinVersion: tls.VersionName(tls.VersionTLS12), MaxVersion: tls.VersionName(tls.VersionTLS13),
		KeyType: t.KeyType, Tickets: t.Tickets, ALPN: strings.Join(alpn, ","), CertSHA256: d.SHA256, CertExpires: d.NotAfter}
}

// serverConfig: TLS 1.3 and 1.2 (Go's default suites, its own preference
// order), the ALPN protocols alpn (HTTPVersions.alpn: http/1.1 alone
// unless -http offers 2), tickets as set. A client whose ALPN list has
// none of them fails the handshake (no_application_protocol).
func (t *TLSSettings) serverConfig(alpn []string) *tls.Config {
	return &tls.Config{
		Certificates:           []tls.Certificate{t.Cert},
		MinVersion:             tls.VersionTLS12,
		MaxVersion:             tls.VersionTLS13,
		NextProtos:             alpn,
		SessionTicketsDisabled: !t.Tickets,
	}
}

// loadTLS reads -tls-cert and -tls-key: both or neither; each readable;
// a pair; a key type the lab supports. -tls-tickets only with them.
func loadTLS(certFile, keyFile string, tickets bool, fs *flag.FlagSet) (*TLSSettings, error) {
	ticketsSet := false
	fs.Visit(func(f *flag.Flag) { ticketsSet = ticketsSet || f.Name == "tls-tickets" })
	switch {
	case certFile == "" && keyFile == "":
		if ticketsSet {
			return nil, errors.New("-tls-tickets applies to HTTPS only: give -tls-cert and -tls-key too")
		}
		return nil, nil
	case certFile == "":
		return nil, errors.New("-tls-key without -tls-cert: give both (the certificate and its key)")
	case keyFile == "":
		return nil, errors.New("-tls-cert without -tls-key: give both (the certificate and its key)")
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert %s cannot be read: %w", certFile, errors.Unwrap(err))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("-tls-key %s cannot be read: %w", keyFile, errors.Unwrap(err))
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("-tls-cert %s and -tls-key %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return nil, fmt.Errorf("-tls-cert %s: %w", certFile, err)
		}
	}
	kt := tlscert.KeyTypeOf(cert.Leaf.PublicKey)
	if err := tlscert.CheckKeyType(kt); err != nil {
		return nil, fmt.Errorf("-tls-key %s: %w", keyFile, err)
	}
	return &TLSSettings{Cert: cert, KeyType: kt, Tickets: tickets, SHA256: tlscert.Describe(cert.Leaf).SHA256}, nil
}
