package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// selfSigned writes a certificate for 127.0.0.1 and its key, in PEM, to
// dir, and returns the certificate's pool and the two paths.
func selfSigned(t *testing.T, dir string) (*x509.CertPool, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcphost test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool, certFile, keyFile
}

// With --tls-cert and --tls-key, serve speaks HTTPS: a client that trusts
// the certificate lists the tools with the token, and plain HTTP to the
// same address reaches nothing.
func TestServeOverTLS(t *testing.T) {
	dir := t.TempDir()
	pool, certFile, keyFile := selfSigned(t, dir)
	const token = "0123456789abcdefghijklmnop"
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errR, errW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: errW, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
		done <- run(ctx, []string{"serve", "--http", "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile, "--token-file", tokenFile}, s)
		errW.Close()
	}()
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "mcphost: serving MCP on "); ok {
				url <- u
			}
		}
	}()
	var u string
	select {
	case u = <-url:
	case c := <-done:
		t.Fatalf("serve exited %d before it served", c)
	case <-ctx.Done():
		t.Fatal("serve printed no address")
	}
	if !strings.HasPrefix(u, "https://") {
		t.Fatalf("serve says it serves %s, want an https:// address", u)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	defer tr.CloseIdleConnections()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tls-test", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: u, HTTPClient: &http.Client{Transport: withToken{token, tr}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect over TLS: %v", err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("list over TLS: %v", err)
	}
	cs.Close()
	// The same address in plain HTTP: the token would go in clear, and
	// nothing answers it as MCP.
	plain := strings.Replace(u, "https://", "http://", 1)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, plain, strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP to the TLS address: status %d, want the TLS server's 400", res.StatusCode)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve exited %d", code)
	}
}

// serve --allow-remote on an address other machines reach, without TLS, is
// refused before it listens or makes a token (the bound only keeps a serve
// that wrongly starts from running for ever).
func TestServeRefusesPlainHTTPToTheNetwork(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": filepath.Join(dir, "state"), "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "NO_COLOR": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stderr strings.Builder
	s := &streams{In: strings.NewReader(""), Out: io.Discard, Err: &stderr, Getenv: func(k string) string { return env[k] }, WorkDir: dir}
	code := run(ctx, []string{"--server", "a=fixture", "serve", "--http", "0.0.0.0:0", "--allow-remote"}, s)
	if code != exitUsage || !strings.Contains(stderr.String(), "in clear: add --tls-cert FILE --tls-key FILE") {
		t.Fatalf("exit %d, stderr %q: want %d and the fix named", code, stderr.String(), exitUsage)
	}
	if _, err := os.Stat(filepath.Join(dir, "state", "mcphost", "serve-token")); err == nil {
		t.Error("a token was made for a serve that was refused")
	}
}
