package servercli

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/request"
	"github.com/ckpt-dev/ckpt/internal/telemetry/otlptest"
	"github.com/ckpt-dev/ckpt/remote"
)

// ckpt serve with --otlp-endpoint exports, to a real OTLP receiver, a span
// per request (a child of the caller's traceparent header) and the served
// store's work: a checkpoint written through the server under a
// traceparent is in the caller's trace, its steps under it.
func TestServeExportsTraces(t *testing.T) {
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	dir := filepath.Join(t.TempDir(), ".ckpt")
	if st, err := filestore.Init(dir, filestore.Options{}); err != nil {
		t.Fatal(err)
	} else {
		st.Close()
	}
	var stderr bytes.Buffer
	ready := make(chan net.Addr, 1)
	ctx, stop := context.WithCancel(context.Background())
	o := &ServeOptions{
		IO:   cmdutil.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &stderr},
		Now:  time.Now,
		Addr: "127.0.0.1:0", Insecure: true, Grace: time.Second,
		OTLP:  rcv.URL + "/v1/traces",
		Ready: func(a net.Addr) { ready <- a },
		OpenLocal: func() (ckpt.Store, string, error) {
			st, err := filestore.Open(dir)
			return st, dir, err
		},
	}
	served := make(chan error, 1)
	go func() { served <- runServe(ctx, o) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-served:
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	st, err := remote.Open(ctx, "http://"+addr.String(), remote.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	for _, r := range []request.Request{
		request.Start{Title: "Traced work", Session: "s1", Steps: []ckpt.Step{{ID: "a", Title: "Step A"}}},
		request.Step{Step: "a", Status: ckpt.StepInProgress},
		request.Step{Step: "a", Status: ckpt.StepDone},
		request.Status{Status: ckpt.StatusDone},
	} {
		e, err := request.NewEvent(r, request.Write{})
		if err != nil {
			t.Fatal(err)
		}
		e.Trace = caller
		if _, err := st.Append(ctx, "job", e, ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// The exporter follows the feed and batches every 100 ms here
	// (OTEL_BSP_SCHEDULE_DELAY): wait for the checkpoint's span, which ends
	// last, with a bound far beyond need.
	for deadline := time.Now().Add(time.Minute); len(rcv.Spans("ckpt.checkpoint")) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	st.Close()
	stop()
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if !strings.Contains(stderr.String(), "exporting traces over OTLP/HTTP") {
		t.Errorf("serve did not say it exports:\n%s", stderr.String())
	}
	roots, steps := rcv.Spans("ckpt.checkpoint"), rcv.Spans("ckpt.step Step A")
	if len(roots) != 1 || len(steps) != 1 {
		t.Fatalf("%d checkpoint and %d step spans, want 1 each; all: %d", len(roots), len(steps), len(rcv.Spans("")))
	}
	if got := hex.EncodeToString(roots[0].TraceId); got != "0af7651916cd43dd8448eb211c80319c" {
		t.Errorf("the checkpoint's trace is %s, want the caller's", got)
	}
	var requests int
	for _, s := range rcv.Spans("") {
		if strings.HasPrefix(s.Name, "POST /v1/events/") && otlptest.Attr(s, "http.route") == "/v1/events/{id}" {
			requests++
		}
	}
	if requests != 4 {
		t.Errorf("%d request spans for the 4 appends", requests)
	}
	if rcv.Resource("service.name") != "ckpt-server" {
		t.Errorf("service.name %q", rcv.Resource("service.name"))
	}
}
