package servercli

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/memstore"
)

// TestMCPStdio serves one client on in-process pipes: initialize, a tool
// call, then the client hangs up and the command returns nil.
func TestMCPStdio(t *testing.T) {
	store := memstore.New()
	clientOut, serverIn := io.Pipe()
	serverOut, clientIn := io.Pipe()
	o := &MCPOptions{
		IO:    cmdutil.IOStreams{In: clientOut, Out: clientIn, ErrOut: io.Discard},
		Now:   func() time.Time { return t0 },
		Store: func() (ckpt.Store, error) { return store, nil },
		Agent: "tester",
	}
	done := make(chan error, 1)
	go func() { done <- runMCP(context.Background(), o) }()

	send := func(msg string) { io.WriteString(serverIn, msg+"\n") }
	lines := bufio.NewScanner(serverOut)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	next := func() map[string]any {
		if !lines.Scan() {
			t.Fatalf("server closed: %v", lines.Err())
		}
		var m map[string]any
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("server wrote %q: %v", lines.Text(), err)
		}
		return m
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if init := next(); init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ckpt_start","arguments":{"id":"job","title":"Job"}}}`)
	res := next()
	if r, ok := res["result"].(map[string]any); !ok || r["isError"] == true {
		t.Fatalf("ckpt_start: %v", res)
	}
	serverIn.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("runMCP after the client hung up: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("runMCP did not return after stdin closed")
	}
	c, err := store.Get(context.Background(), "job", 0)
	if err != nil || c.Title != "Job" {
		t.Fatalf("stored: %v %+v", err, c)
	}
}
