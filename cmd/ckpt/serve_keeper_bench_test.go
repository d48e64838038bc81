package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkUpdateOverServer measures a whole `ckpt update` process against
// a `ckpt serve` over TLS on loopback (CKPT_STORE=https://…, CKPT_TOKEN,
// the server's self-signed certificate in SSL_CERT_FILE) against the same
// command on a local store, in one run, each iteration running every case
// once, each first in turn:
//
//   - hello: a hello-world Go binary, the floor of any process;
//   - local: ckpt update on a .ckpt/ store (durable: fsync);
//   - served: ckpt update over the server, directly (CKPT_KEEPER=off): a
//     TCP connection and a TLS handshake per process;
//   - served-keeper: the same as an agent runs it by default, through
//     this user's keeper of the server and token (started by a warm-up
//     beat and kept running), which holds the TLS connections open.
//
// It reports each case's median wall time (NAME-ms) and, for the served
// cases, the ratio to local in wall and client CPU (NAME-vs-local-x,
// NAME-vs-local-cpu-x), the server's CPU per update (NAME-server-cpu-µs,
// every thread of the ckpt serve process) and, for the keeper's case, the
// keeper's CPU per update (served-keeper-keeper-cpu-µs) and the client's
// and keeper's CPU together against local's (served-keeper-with-keeper-
// vs-local-cpu-x); and local's CPU against hello's.
//
//	go test -run '^$' -bench UpdateOverServer -benchtime 100x ./cmd/ckpt
func BenchmarkUpdateOverServer(b *testing.B) {
	hello := helloBinary(b)
	bin := ckptBinary(b)
	dir := b.TempDir()
	local := filepath.Join(dir, ".ckpt")
	if _, err := ckptRun(b, bin, "--store", local, "init"); err != nil {
		b.Fatal(err)
	}
	id := "kai-7/secondary-a"
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "USER=kai", "CKPT_ID=" + id, "CKPT_KEEPER=off"}
	srv, remote := startTLSServe(b, bin, dir, env)
	for _, e := range [][]string{append(slices.Clone(env), "CKPT_STORE="+local), remote} {
		start := exec.Command(bin, "start", id, "--step", "research", "--step", "spec")
		start.Dir, start.Env = dir, e
		if out, err := start.CombinedOutput(); err != nil {
			b.Fatalf("ckpt start: %v: %s", err, out)
		}
	}
	keeperEnv, keeperPID := benchKeeper(b, bin, srv.url, remote, "beat", id)
	i := 0
	update := func(store string, env []string) func() *exec.Cmd {
		return func() *exec.Cmd {
			i++
			cmd := exec.Command(bin, "--store", store, "update", id, "--stage", "S2.P2",
				"--current-step", fmt.Sprintf("Writing acceptance criteria %d", i), "--file-modified", "feature_02/spec.md")
			cmd.Dir, cmd.Env = dir, env
			return cmd
		}
	}
	serverCPU := func() time.Duration { return processCPU(b, srv.cmd.Process.Pid) }
	keeperCPU := func() time.Duration { return processCPU(b, keeperPID) }
	cases := []servedCase{
		{name: "hello", cmd: func() *exec.Cmd { c := exec.Command(hello); c.Dir, c.Env = dir, env; return c }},
		{name: "local", cmd: update(local, env)},
		{name: "served", cmd: update(srv.url, remote), server: serverCPU},
		{name: "served-keeper", cmd: update(srv.url, keeperEnv), server: serverCPU, keeper: keeperCPU},
	}
	runServedCases(b, cases)
	reportServedCases(b, cases)
}

// startTLSServe runs `ckpt serve` over TLS (a self-signed certificate
// written into dir) over a store of its own, and returns it and env with
// what a client of it needs: CKPT_STORE, its admin CKPT_TOKEN and the
// certificate in SSL_CERT_FILE.
func startTLSServe(b *testing.B, bin, dir string, env []string) (*serveProcess, []string) {
	certFile, keyFile := selfSignedCert(b, dir)
	srv := startServe(b, bin, newProcessStore(b, bin), "127.0.0.1:0", "--tls-cert", certFile, "--tls-key", keyFile)
	if srv.admin == "" {
		b.Fatalf("ckpt serve printed no admin token: %q", srv.stdout.String())
	}
	return srv, append(slices.Clone(env), "CKPT_STORE="+srv.url, "CKPT_TOKEN="+srv.admin, "SSL_CERT_FILE="+certFile)
}

// BenchmarkHookOverServer is BenchmarkUpdateOverServer for a hook: a
// whole `ckpt hook PreToolUse` process (Claude Code's payload on stdin: a
// presence beat), the event Claude Code sends before every tool call, on
// a local store, over the server directly and through the keeper, with a
// hello-world; it reports the same figures.
//
//	go test -run '^$' -bench HookOverServer -benchtime 40x ./cmd/ckpt
func BenchmarkHookOverServer(b *testing.B) {
	hello := helloBinary(b)
	bin := ckptBinary(b)
	h := newHookSession(b, bin)
	dir, env := h.dir, h.env
	srv, remote := startTLSServe(b, bin, dir, env)
	h.start(b, h.local, env)
	h.start(b, srv.url, remote)
	keeperEnv, keeperPID := benchKeeper(b, bin, srv.url, remote, "beat", "app/session-s1")
	cases := []servedCase{
		{name: "hello", cmd: func() *exec.Cmd { c := exec.Command(hello); c.Dir, c.Env = dir, env; return c }},
		{name: "local", cmd: h.preToolUse(h.local, env)},
		{name: "served", cmd: h.preToolUse(srv.url, remote), server: func() time.Duration { return processCPU(b, srv.cmd.Process.Pid) }},
		{name: "served-keeper", cmd: h.preToolUse(srv.url, keeperEnv), server: func() time.Duration { return processCPU(b, srv.cmd.Process.Pid) },
			keeper: func() time.Duration { return processCPU(b, keeperPID) }},
	}
	runServedCases(b, cases)
	reportServedCases(b, cases)
}

// servedCase is one whole process BenchmarkUpdateOverServer times, with
// the CPU of the processes working for it beside it.
type servedCase struct {
	name           string
	cmd            func() *exec.Cmd
	server, keeper func() time.Duration // the CPU so far of ckpt serve, of the keeper (nil: not counted)

	wall, cpu            []time.Duration
	serverCPU, keeperCPU time.Duration // summed over runs
	runs                 int
}

// runServedCases runs every case once per iteration of b's loop, each
// case first in turn.
func runServedCases(b *testing.B, cases []servedCase) {
	runs := 0
	for b.Loop() {
		for k := range cases {
			c := &cases[(k+runs)%len(cases)]
			cmd := c.cmd()
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			var server0, keeper0 time.Duration
			if c.server != nil {
				server0 = c.server()
			}
			if c.keeper != nil {
				keeper0 = c.keeper()
			}
			start := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%s: %v: %v: %s", c.name, cmd.Args[1:], err, out.Bytes())
			}
			c.wall = append(c.wall, time.Since(start))
			c.cpu = append(c.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
			if c.server != nil {
				c.serverCPU += c.server() - server0
			}
			if c.keeper != nil {
				c.keeperCPU += c.keeper() - keeper0
			}
			c.runs++
		}
		runs++
	}
}

// reportServedCases reports what runServedCases measured (see
// BenchmarkUpdateOverServer); cases[0] is hello, cases[1] local.
func reportServedCases(b *testing.B, cases []servedCase) {
	if cases[0].runs == 0 {
		return
	}
	med := func(ts []time.Duration) time.Duration { return median(slices.Clone(ts)) }
	hello, local := &cases[0], &cases[1]
	for k := range cases {
		c := &cases[k]
		perRun := func(d time.Duration) float64 { return float64((d / time.Duration(c.runs)).Microseconds()) }
		b.ReportMetric(float64(med(c.wall).Microseconds())/1000, c.name+"-ms")
		if c.server == nil {
			continue
		}
		b.ReportMetric(float64(med(c.wall))/float64(med(local.wall)), c.name+"-vs-local-x")
		b.ReportMetric(float64(med(c.cpu))/float64(med(local.cpu)), c.name+"-vs-local-cpu-x")
		b.ReportMetric(perRun(c.serverCPU), c.name+"-server-cpu-µs")
		if c.keeper != nil {
			b.ReportMetric(perRun(c.keeperCPU), c.name+"-keeper-cpu-µs")
			with := med(c.cpu) + c.keeperCPU/time.Duration(c.runs)
			b.ReportMetric(float64(with)/float64(med(local.cpu)), c.name+"-with-keeper-vs-local-cpu-x")
		}
	}
	b.ReportMetric(float64(med(local.cpu).Microseconds()), "local-cpu-µs")
	b.ReportMetric(float64(med(local.cpu))/float64(med(hello.cpu)), "local-vs-hello-cpu-x")
}

// selfSignedCert writes a self-signed certificate for 127.0.0.1 and its
// key (PEM) into dir and returns their paths: what ckpt serve's
// --tls-cert and --tls-key take, and the client trusts by SSL_CERT_FILE.
func selfSignedCert(tb testing.TB, dir string) (certFile, keyFile string) {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		tb.Fatal(err)
	}
	return certFile, keyFile
}
