package registry

import (
	"crypto/tls"
	"fmt"
	"sync/atomic"
)

// CertReloader serves a TLS certificate read from files and reads them
// again on Reload (plugkit serve calls it on SIGHUP), so that a renewed
// certificate is used without a restart. A failed reload keeps the
// certificate in use. Connections already open keep theirs.
type CertReloader struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
}

// NewCertReloader loads the PEM certificate (chain) and key.
func NewCertReloader(certFile, keyFile string) (*CertReloader, error) {
	c := &CertReloader{certFile: certFile, keyFile: keyFile}
	if err := c.Reload(); err != nil {
		return nil, err
	}
	return c, nil
}

// Reload reads the files again and, if they hold a valid pair, serves it
// from the next handshake on.
func (c *CertReloader) Reload() error {
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("registry: TLS certificate %s and key %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert.Store(&cert)
	return nil
}

// GetCertificate is for tls.Config.GetCertificate.
func (c *CertReloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.cert.Load(), nil
}

// TLSConfig returns a server configuration that serves the current
// certificate, TLS 1.2 at least.
func (c *CertReloader) TLSConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}
