package remote_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// TestServeTLS: Serve with a certificate speaks TLS; a client that trusts
// the certificate works over https://, one that does not is refused before
// any token is sent.
func TestServeTLS(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	tokens, admin := fleetTokens(t)
	srv, err := server.New(memstore.New(), server.Options{Tokens: tokens, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- srv.Serve(ctx, ln, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}, time.Second)
	}()
	defer func() { cancel(); <-done }()
	url := "https://" + ln.Addr().String()

	pool := x509.NewCertPool()
	pool.AddCert(cert)
	trusting := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	c, err := remote.New(url, remote.Options{Token: admin, HTTPClient: trusting})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(context.Background(), "tls", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatalf("append over TLS: %v", err)
	}
	wary, err := remote.New(url, remote.Options{Token: admin, Attempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	var unknown x509.UnknownAuthorityError
	if _, err := wary.Get(context.Background(), "tls", 0); !errors.As(err, &unknown) {
		t.Errorf("a client that does not trust the certificate: %v", err)
	}
}
