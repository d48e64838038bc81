package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// TestRemoteScripts runs the scripts in testdata/remotescript against a
// real ckpt server over a filestore ($WORK/server/.ckpt), reached as
// CKPT_STORE=http://127.0.0.1:PORT: CKPT_TOKEN is a write token, and
// ADMIN_TOKEN and KAI_TOKEN (write, bound to agent kai-7 and prefix
// kai-7/) are there to switch to. `server down` stops it (nothing listens
// on the port: a client is refused at once, as by a machine that is off);
// `server up` starts it again on the same port over the same store.
func TestRemoteScripts(t *testing.T) {
	bin := ckptBinary(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/remotescript",
		RequireExplicitExec: true,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  cmdExits,
			"json":   cmdJSON,
			"server": cmdServer,
		},
		Setup: func(env *testscript.Env) error {
			srv, err := startScriptServer(filepath.Join(env.WorkDir, "server"))
			if err != nil {
				return err
			}
			env.Defer(srv.close)
			env.Values[scriptServerKey{}] = srv
			env.Setenv("CKPT_STORE", "http://"+srv.addr)
			env.Setenv("CKPT_TOKEN", srv.write)
			env.Setenv("ADMIN_TOKEN", srv.admin)
			env.Setenv("KAI_TOKEN", srv.kai)
			env.Setenv("SERVER_STORE", filepath.Join(env.WorkDir, "server", filestore.StoreDirName))
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			// The scripts pin the direct path; keeper_serve_process_test.go
			// holds the keeper's to it.
			env.Setenv("CKPT_KEEPER", "off")
			return scriptPath(env, bin)
		},
	})
}

type scriptServerKey struct{}

// scriptServer is one script's server.
type scriptServer struct {
	handler           http.Handler
	store             *filestore.Store
	addr              string
	admin, write, kai string
	mu                sync.Mutex
	http              *http.Server
}

func startScriptServer(dir string) (*scriptServer, error) {
	st, err := filestore.Init(filepath.Join(dir, filestore.StoreDirName), filestore.Options{})
	if err != nil {
		return nil, err
	}
	tokens, err := server.OpenFileTokens(filepath.Join(dir, server.TokenFileName))
	if err != nil {
		return nil, err
	}
	ctx, now := context.Background(), time.Now()
	s := &scriptServer{}
	if s.admin, err = server.Bootstrap(ctx, tokens, now); err != nil {
		return nil, err
	}
	for _, tok := range []struct {
		bearer        *string
		prefix, agent string
	}{{&s.write, "", ""}, {&s.kai, "kai-7/", "kai-7"}} {
		t, bearer, err := server.NewToken(server.ScopeWrite, tok.prefix, tok.agent, "", now)
		if err != nil {
			return nil, err
		}
		if err := tokens.Add(ctx, t); err != nil {
			return nil, err
		}
		*tok.bearer = bearer
	}
	srv, err := server.New(st, server.Options{Tokens: tokens})
	if err != nil {
		return nil, err
	}
	s.handler, s.store = srv, st
	return s, s.up("127.0.0.1:0")
}

// up serves on addr (the port of the first start, after that).
func (s *scriptServer) up(addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http != nil {
		return errors.New("the server is up already")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	s.addr = ln.Addr().String()
	s.http = &http.Server{Handler: s.handler}
	go s.http.Serve(ln)
	return nil
}

// down stops serving: the listener and every connection are closed.
func (s *scriptServer) down() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.http != nil {
		s.http.Close()
		s.http = nil
	}
}

// close stops the server and closes its store.
func (s *scriptServer) close() {
	s.down()
	s.store.Close()
}

// cmdServer: server down|up.
func cmdServer(ts *testscript.TestScript, neg bool, args []string) {
	s, _ := ts.Value(scriptServerKey{}).(*scriptServer)
	if neg || len(args) != 1 || s == nil {
		ts.Fatalf("usage: server down|up")
	}
	switch args[0] {
	case "down":
		s.down()
	case "up":
		ts.Check(s.up(s.addr))
	default:
		ts.Fatalf("usage: server down|up")
	}
}
