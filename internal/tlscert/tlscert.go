// Package tlscert makes the lab's TLS material for one run: a certificate
// authority and a server certificate for the server's IP address (an IP SAN),
// with crypto/x509 only (no openssl), and checks material a user brings.
//
// The CA exists for one run: its key signs the server certificate and is
// then dropped, never written anywhere, so nothing can sign with it later.
// The server key is written with mode 0600, and never into a git checkout
// (a key in a repository is one `git add .` away from being published).
package tlscert

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"csbench/internal/atomicfile"
)

// Key types a run may ask for (TLS_KEY_TYPE).
const (
	ECDSAP256 = "ecdsa-p256" // the default: what most services present today
	RSA2048   = "rsa-2048"   // the other common choice, far costlier to sign with
)

// KeyTypes lists the supported key types, the default first.
var KeyTypes = []string{ECDSAP256, RSA2048}

// File names inside the output directory.
const (
	CAFile   = "ca.pem"   // the run's CA certificate: what clients trust
	CertFile = "cert.pem" // the server certificate (its chain: leaf only, the CA is the trust anchor)
	KeyFile  = "key.pem"  // the server key, PKCS#8, mode 0600
)

// DefaultValidity covers any run; the certificate is made fresh per run.
const DefaultValidity = 7 * 24 * time.Hour

// A BadInputError is material or a request the caller must fix (exit 2).
type BadInputError struct{ Msg string }

func (e *BadInputError) Error() string { return e.Msg }

func badf(format string, args ...any) error {
	return &BadInputError{Msg: fmt.Sprintf(format, args...)}
}

// CheckKeyType refuses a key type this package does not make.
func CheckKeyType(kt string) error {
	for _, k := range KeyTypes {
		if kt == k {
			return nil
		}
	}
	return badf("key type %q is not supported: use one of %s", kt, strings.Join(KeyTypes, ", "))
}

// Bundle is one run's material, PEM-encoded.
type Bundle struct {
	CAPEM   []byte
	CertPEM []byte
	KeyPEM  []byte
}

func newKey(kt string) (crypto.Signer, error) {
	switch kt {
	case ECDSAP256:
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return nil, CheckKeyType(kt)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// Make creates a CA and a server certificate for ip, both with keys of type
// kt, valid from now-1h (clock skew between the hosts) for validity. The CA
// key is dropped when Make returns.
func Make(ip netip.Addr, kt string, now time.Time, validity time.Duration) (*Bundle, error) {
	if err := CheckKeyType(kt); err != nil {
		return nil, err
	}
	if !ip.IsValid() {
		return nil, badf("no IP address given: the certificate names the server's IP (SERVER_IP)")
	}
	caKey, err := newKey(kt)
	if err != nil {
		return nil, err
	}
	srvKey, err := newKey(kt)
	if err != nil {
		return nil, err
	}
	caSerial, err := serial()
	if err != nil {
		return nil, err
	}
	srvSerial, err := serial()
	if err != nil {
		return nil, err
	}
	notBefore := now.Add(-time.Hour).UTC().Truncate(time.Second)
	notAfter := now.Add(validity).UTC().Truncate(time.Second)
	ca := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{Organization: []string{"CS Benchmark lab"}, CommonName: "CS Benchmark lab CA (one run)"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("making the CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	usage := x509.KeyUsageDigitalSignature
	if kt == RSA2048 {
		usage |= x509.KeyUsageKeyEncipherment // TLS 1.2 RSA key exchange, should a client offer only that
	}
	leaf := &x509.Certificate{
		SerialNumber: srvSerial,
		Subject:      pkix.Name{Organization: []string{"CS Benchmark lab"}, CommonName: ip.String()},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     usage,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{ip.AsSlice()},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, srvKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("making the server certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	return &Bundle{
		CAPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// InsideRepo returns the root of the git checkout that path (made absolute,
// its existing part's symlinks resolved) lies in, or "".
func InsideRepo(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	// Resolve the longest existing prefix, so a symlink into a checkout is seen.
	p, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			abs = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// WriteDir writes the bundle into dir (which must exist): ca.pem and
// cert.pem 0644, key.pem 0600, each by temp-and-rename. A dir inside a git
// checkout is refused before anything is written.
func WriteDir(dir string, b *Bundle) error {
	repo, err := InsideRepo(dir)
	if err != nil {
		return err
	}
	if repo != "" {
		return badf("-dir %s is inside the git checkout %s: a private key must not land where it can be committed; give a directory outside it (the run's server-side work directory)", dir, repo)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return badf("-dir %s is not a directory: make it first (mode 0700)", dir)
	}
	if err := atomicfile.Write(filepath.Join(dir, KeyFile), b.KeyPEM, 0o600); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, CertFile), b.CertPEM, 0o644); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, CAFile), b.CAPEM, 0o644)
}

// Info describes a certificate in the words a report uses.
type Info struct {
	KeyType     string `json:"key_type"` // ecdsa-p256, rsa-2048, ... (KeyTypeOf)
	Subject     string `json:"subject"`
	Issuer      string `json:"issuer"`
	IPs         string `json:"ips"`
	NotAfter    string `json:"not_after"`
	SHA256      string `json:"sha256"` // of the DER certificate
	SelfSigned  bool   `json:"self_signed"`
	FromLabCA   bool   `json:"from_lab_ca"`
	SigAlgoName string `json:"signature_algorithm"`
}

// KeyTypeOf names a public key as TLS_KEY_TYPE does (rsa-<bits>,
// ecdsa-p<bits>, ed25519), or "unknown".
func KeyTypeOf(pub any) string {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return fmt.Sprintf("rsa-%d", k.N.BitLen())
	case *ecdsa.PublicKey:
		return fmt.Sprintf("ecdsa-p%d", k.Curve.Params().BitSize)
	case ed25519.PublicKey:
		return "ed25519"
	}
	return "unknown"
}

// Describe returns the Info of a DER certificate.
func Describe(c *x509.Certificate) Info {
	ips := make([]string, len(c.IPAddresses))
	for i, ip := range c.IPAddresses {
		ips[i] = ip.String()
	}
	sum := sha256.Sum256(c.Raw)
	return Info{
		KeyType:     KeyTypeOf(c.PublicKey),
		Subject:     c.Subject.String(),
		Issuer:      c.Issuer.String(),
		IPs:         strings.Join(ips, ","),
		NotAfter:    c.NotAfter.UTC().Format(time.RFC3339),
		SHA256:      hex.EncodeToString(sum[:]),
		SelfSigned:  bytes.Equal(c.RawIssuer, c.RawSubject),
		FromLabCA:   strings.Contains(c.Issuer.String(), "CS Benchmark lab CA"),
		SigAlgoName: c.SignatureAlgorithm.String(),
	}
}

// ReadCertFile returns the first certificate of a PEM file.
func ReadCertFile(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, badf("certificate %s cannot be read: %v", path, unwrapPath(err))
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		return nil, badf("certificate %s holds no PEM CERTIFICATE block: give a PEM certificate file", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		return nil, badf("certificate %s: %v", path, err)
	}
	return c, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Check verifies material a user brings (or Make made): the key can be read
// and is of a supported type, it belongs to the certificate, and the
// certificate chains to the CA in caFile for ip. It returns the leaf's Info.
// Every failure is a *BadInputError naming the file and the fix.
func Check(certFile, keyFile, caFile string, ip netip.Addr) (Info, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return Info{}, badf("TLS certificate %s cannot be read: %v; give the path of the server's PEM certificate (chain)", certFile, unwrapPath(err))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return Info{}, badf("TLS key %s cannot be read: %v; give a readable PEM private key (mode 0600, owned by you)", keyFile, unwrapPath(err))
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return Info{}, badf("TLS CA %s cannot be read: %v; give the PEM certificate of the CA that signed the server certificate", caFile, unwrapPath(err))
	}
	blk, _ := pem.Decode(keyPEM)
	if blk == nil || !strings.Contains(blk.Type, "PRIVATE KEY") {
		return Info{}, badf("TLS key %s holds no PEM private key: give a PEM private key (PKCS#8, EC or PKCS#1)", keyFile)
	}
	key, err := parseKey(blk.Bytes)
	if err != nil {
		return Info{}, badf("TLS key %s cannot be parsed: %v", keyFile, err)
	}
	kt := KeyTypeOf(key.Public())
	if CheckKeyType(kt) != nil {
		return Info{}, badf("TLS key %s is %s: not a supported key type; use one of %s", keyFile, kt, strings.Join(KeyTypes, ", "))
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return Info{}, badf("TLS certificate %s and key %s do not make a pair: %v", certFile, keyFile, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return Info{}, badf("TLS certificate %s: %v", certFile, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return Info{}, badf("TLS CA %s holds no PEM certificate", caFile)
	}
	inter := x509.NewCertPool()
	for _, der := range pair.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, DNSName: ip.String(),
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return Info{}, badf("TLS certificate %s does not verify for %s against the CA %s: %v", certFile, ip, caFile, err)
	}
	return Describe(leaf), nil
}

func parseKey(der []byte) (crypto.Signer, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("not a signing key")
	}
	if k, err := x509.ParseECPrivateKey(der); err == nil {
		return k, nil
	}
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	return nil, errors.New("neither PKCS#8, EC nor PKCS#1")
}

// State is the negotiated state of one TLS connection, in a report's words.
type State struct {
	Version     string `json:"version"`      // "TLS 1.3"
	CipherSuite string `json:"cipher_suite"` // "TLS_AES_128_GCM_SHA256"
	ALPN        string `json:"alpn"`         // "http/1.1", "" when none
	KeyType     string `json:"key_type"`     // the server certificate's key: ecdsa-p256, rsa-2048
	Resumed     bool   `json:"resumed"`
}

// StateOf describes a completed client handshake.
func StateOf(cs tls.ConnectionState) State {
	st := State{
		Version:     tls.VersionName(cs.Version),
		CipherSuite: tls.CipherSuiteName(cs.CipherSuite),
		ALPN:        cs.NegotiatedProtocol,
		Resumed:     cs.DidResume,
		KeyType:     "unknown",
	}
	if len(cs.PeerCertificates) > 0 {
		st.KeyType = KeyTypeOf(cs.PeerCertificates[0].PublicKey)
	}
	return st
}

// ProbeSchemaVersion is the tls-probe document's major version.
const ProbeSchemaVersion = 1

// Probe is raw/tls-probe.json (csb tls-probe): what the client's first
// connection negotiated, and whether a second one resumed (the server's
// session tickets).
type Probe struct {
	SchemaVersion int      `json:"schema_version"`
	Document      string   `json:"document"` // "tls-probe"
	Tool          string   `json:"tool"`
	Target        string   `json:"target"`
	First         State    `json:"first"`
	Second        State    `json:"second"`
	ConnectMs     float64  `json:"connect_ms"`
	HandshakeMs   float64  `json:"handshake_ms"`
	ResumedMs     *float64 `json:"resumed_handshake_ms"` // null: the second did not resume
}

// ReadProbe reads a tls-probe document, refusing another major version.
func ReadProbe(path string) (*Probe, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p Probe
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if p.Document != "tls-probe" || p.SchemaVersion != ProbeSchemaVersion {
		return nil, fmt.Errorf("%s: document %q schema_version %d; this csb reads tls-probe version %d", path, p.Document, p.SchemaVersion, ProbeSchemaVersion)
	}
	return &p, nil
}
