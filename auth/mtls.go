package auth

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"slices"
	"strings"
)

// MTLSConfig returns a server tls.Config that requires a client
// certificate signed by one of the CAs in the PEM bundle at caFile. Set the
// server certificate on it; set ClientAuth to tls.VerifyClientCertIfGiven
// to let token clients in without a certificate.
func MTLSConfig(caFile string) (*tls.Config, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read client CA bundle: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read client CA bundle %s: no PEM certificate found", caFile)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  pool,
	}, nil
}

// CertIdentity is what a client certificate name maps to.
type CertIdentity struct {
	Role    Role     `mapstructure:"role" yaml:"role" json:"role"`
	Matters []string `mapstructure:"matters" yaml:"matters" json:"matters,omitempty"`
}

// CertMap maps verified client certificates to principals by name: the
// subject common name, else the first mapped DNS, e-mail or URI subject
// alternative name.
type CertMap struct {
	byName map[string]CertIdentity
}

// NewCertMap returns a CertMap over names (common name or SAN → identity),
// checking every role and matter.
func NewCertMap(names map[string]CertIdentity) (*CertMap, error) {
	m := &CertMap{byName: make(map[string]CertIdentity, len(names))}
	for name, id := range names {
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("client certificate map: empty name")
		}
		if !id.Role.Valid() {
			return nil, fmt.Errorf("client certificate %s: %w %q", name, ErrUnknownRole, id.Role)
		}
		matters, err := cleanMatters(id.Matters)
		if err != nil {
			return nil, fmt.Errorf("client certificate %s: %w", name, err)
		}
		m.byName[name] = CertIdentity{Role: id.Role, Matters: matters}
	}
	return m, nil
}

// Principal maps a verified client certificate to its principal, or
// returns ErrUnauthenticated when none of its names is mapped. The caller
// must have verified cert (tls.ConnectionState.VerifiedChains).
func (m *CertMap) Principal(cert *x509.Certificate) (Principal, error) {
	names := []string{cert.Subject.CommonName}
	names = append(names, cert.DNSNames...)
	names = append(names, cert.EmailAddresses...)
	for _, u := range cert.URIs {
		names = append(names, u.String())
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if id, ok := m.byName[n]; ok {
			return Principal{Subject: n, Role: id.Role, Matters: slices.Clone(id.Matters)}, nil
		}
	}
	return Principal{}, fmt.Errorf("%w: client certificate %q is not mapped to a role", ErrUnauthenticated, cert.Subject.CommonName)
}
