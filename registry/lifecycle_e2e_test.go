package registry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plugkit/plugkit/distribution"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with serial to
// dir/tls.crt and dir/tls.key, and returns it.
func writeCert(t *testing.T, dir string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "plugkit test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, b []byte) {
		tmp := filepath.Join(dir, name+".tmp")
		if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("tls.key", "EC PRIVATE KEY", kb)
	write("tls.crt", "CERTIFICATE", der)
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// servedSerial connects with TLS, trusting every certificate given, and
// returns the serial number the server presented.
func servedSerial(t *testing.T, addr string, trust ...*x509.Certificate) (int64, error) {
	pool := x509.NewCertPool()
	for _, c := range trust {
		pool.AddCert(c)
	}
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
}

// TestE2ETLSReloadOnSIGHUP: plugkit serve --tls-cert/--tls-key serves
// https; after the files are replaced, SIGHUP makes new connections get
// the new certificate; a broken pair on SIGHUP keeps the old one.
func TestE2ETLSReloadOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	first := writeCert(t, dir, 1)
	srv := startServe(t, t.TempDir(), "--tls-cert", filepath.Join(dir, "tls.crt"), "--tls-key", filepath.Join(dir, "tls.key"))
	addr, ok := strings.CutPrefix(srv.url, "https://")
	if !ok {
		t.Fatalf("serve URL %s is not https", srv.url)
	}
	if serial, err := servedSerial(t, addr, first); err != nil || serial != 1 {
		t.Fatalf("first certificate: %d %v", serial, err)
	}
	if _, err := servedSerial(t, addr); err == nil {
		t.Fatal("an untrusted certificate was accepted")
	}
	second := writeCert(t, dir, 2)
	if serial, _ := servedSerial(t, addr, first, second); serial != 1 {
		t.Fatalf("the certificate changed before SIGHUP: %d", serial)
	}
	srv.Cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "the new certificate after SIGHUP", func() error {
		serial, err := servedSerial(t, addr, second)
		if err == nil && serial != 2 {
			return fmt.Errorf("serial %d", serial)
		}
		return err
	})
	os.WriteFile(filepath.Join(dir, "tls.key"), []byte("not a key"), 0o600)
	srv.Cmd.Process.Signal(syscall.SIGHUP)
	eventually(t, "a failed reload logged", func() error {
		if !strings.Contains(srv.log(), "TLS reload failed") {
			return fmt.Errorf("not logged")
		}
		return nil
	})
	if serial, err := servedSerial(t, addr, second); err != nil || serial != 2 {
		t.Fatalf("after a failed reload: %d %v", serial, err)
	}
}

// TestE2EGracefulShutdown: SIGTERM while a publish is halfway through its
// body stops new connections, lets the publish finish and answer 201, and
// exits 0.
func TestE2EGracefulShutdown(t *testing.T) {
	data := t.TempDir()
	srv := startServe(t, data)
	art := pluginArchive(t, "graceful", "1.0.0", map[string]string{"data": randomText(256 << 10)})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", srv.url+distribution.Prefix+"/publish", pr)
	req.Header.Set("Authorization", "Bearer "+publishToken)
	req.ContentLength = int64(len(art))
	type result struct {
		code int
		body string
		err  error
	}
	res := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res <- result{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res <- result{code: resp.StatusCode, body: string(b)}
	}()
	pw.Write(art[:len(art)/2])
	// The server is receiving the body once its spool file exists; a
	// connection it has not yet accepted would be reset by the shutdown.
	eventually(t, "the upload is being received", func() error {
		if files, _ := os.ReadDir(filepath.Join(data, "uploads")); len(files) == 0 {
			return fmt.Errorf("no spool file yet")
		}
		return nil
	})
	srv.Cmd.Process.Signal(syscall.SIGTERM)
	addr := strings.TrimPrefix(srv.url, "http://")
	eventually(t, "no new connections after SIGTERM", func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return fmt.Errorf("still accepting")
		}
		return nil
	})
	pw.Write(art[len(art)/2:])
	pw.Close()
	r := <-res
	var pr2 distribution.PublishResult
	if r.err != nil || r.code != 201 || json.Unmarshal([]byte(r.body), &pr2) != nil || !pr2.Created {
		t.Fatalf("the publish in flight: %d %q %v\n%s", r.code, r.body, r.err, srv.log())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not exit after its last request")
	}
}
