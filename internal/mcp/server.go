// Package mcp serves ckpt's checkpoints over the Model Context Protocol, with
// the official Go SDK, so that an agent can record and read its work through
// tool calls instead of shell commands.
//
// NewServer builds the server over any ckpt.Store; the server's Run on an
// IOTransport serves it on stdin/stdout (what `ckpt mcp` does), and
// HTTPHandler or ServeHTTP on
// streamable HTTP (`ckpt mcp --http ADDR`, loopback by default). The server
// calls the library in-process and never runs the ckpt binary. The tools and
// resources are listed in docs/mcp.md.
//
// A tool given bad arguments returns a tool error that says what is wrong
// and writes nothing; every tool that writes appends at most one event.
// The server logs to the Logger in Options (stderr by default), never to
// stdout, which is the protocol's channel in stdio mode.
package mcp

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/ckpt-dev/ckpt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure a server. The zero value is usable.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Version is the server version reported to clients; "" means "dev".
	Version string
	// Agent is the agent recorded as the actor of events when a call names
	// none; "" means "mcp".
	Agent string
	// Logger receives the server's logs; nil means warnings and errors as
	// text on stderr.
	Logger *slog.Logger
	// Thresholds are the default liveness limits of ckpt_stale, ckpt_show
	// and ckpt_list (zero: 2× and 4× each checkpoint's interval).
	Thresholds ckpt.Thresholds
	// Prefix, when set, scopes ckpt_inbox to IDs under it (a prefix-bound
	// token's, over HTTP).
	Prefix string
}

// DefaultAgent is the actor recorded when neither the call nor Options
// names an agent.
const DefaultAgent = "mcp"

// DefaultHTTPAddr is what ListenAddr makes of no address: a loopback
// address, so that a server is not reachable from the network unless asked
// to be.
const DefaultHTTPAddr = "127.0.0.1:8765"

// instructions tell a connecting model what the server is for.
const instructions = `ckpt records the state of agent work as checkpoints, durably, so a crashed, compacted or replaced session can resume. ` +
	`Call ckpt_resume at the start of a session to get the continuation prompt of your checkpoint, ckpt_start to begin new work, ` +
	`ckpt_step when a step starts or ends, ckpt_decision and ckpt_blocker as they happen, and ckpt_heartbeat during long work.`

// server holds what the tool handlers share.
type server struct {
	store ckpt.Store
	opts  Options
	log   *slog.Logger
}

// NewServer returns an MCP server whose tools and resources read and write
// checkpoints in store. It does not take ownership of store: the caller
// closes it after the server stops. The server is safe for concurrent
// sessions (the store is).
func NewServer(store ckpt.Store, opts Options) *sdk.Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "ckpt", Title: "ckpt checkpoints", Version: version},
		&sdk.ServerOptions{Instructions: instructions, Logger: opts.Logger})
	s := &server{store: store, opts: opts, log: opts.Logger}
	s.addTools(srv)
	s.addResources(srv)
	return srv
}

// HTTPHandler serves srv over streamable HTTP, every session on the same
// server. It keeps the SDK's protection against DNS rebinding: a request
// that reaches a loopback address with a non-loopback Host is refused.
func HTTPHandler(srv *sdk.Server) http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
}

// ListenAddr completes a listening address (ckpt serve's): "" is DefaultHTTPAddr, a
// bare port ("8080" or ":8080") binds to 127.0.0.1. An address with a host
// is kept as given, so listening on all interfaces takes an explicit
// "0.0.0.0:8080".
func ListenAddr(addr string) (string, error) {
	if addr == "" {
		return DefaultHTTPAddr, nil
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %v: use HOST:PORT or a port, e.g. 127.0.0.1:8765 or 8765", addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil && port != "" {
		return "", fmt.Errorf("address %q: port %q is not a number", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

func (s *server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now().UTC()
	}
	return time.Now().UTC()
}

// actor is who a call acts as: the agent it names, else the default, in the
// MCP session it came from.
func (s *server) actor(req *sdk.CallToolRequest, agent string) ckpt.Actor {
	if agent == "" {
		agent = s.opts.Agent
	}
	if agent == "" {
		agent = DefaultAgent
	}
	a := ckpt.Actor{Agent: agent}
	if req != nil && req.Session != nil {
		a.Session = req.Session.ID()
	}
	return a
}

// explain returns err as a tool error: the library's message unchanged,
// its stable code, and a hint in the words of the tools (arguments, not
// CLI flags), e.g. "revision conflict: a is at revision 3, not 2: someone
// else wrote first [conflict] (read it again with ckpt_show and retry with
// if_rev 3)".
func explain(err error) error {
	code := ckpt.ErrorCode(err)
	msg := fmt.Sprintf("%v [%s]", err, code)
	if h := toolHint(err, code); h != "" {
		msg += " (" + h + ")"
	}
	return &toolError{msg: msg, err: err}
}

// toolError keeps the library's error inspectable (errors.Is, ErrorCode)
// under the tool's text.
type toolError struct {
	msg string
	err error
}

func (e *toolError) Error() string { return e.msg }
func (e *toolError) Unwrap() error { return e.err }

func toolHint(err error, code ckpt.Code) string {
	var ce *ckpt.ConflictError
	var re *ckpt.RefusedError
	switch {
	case errors.As(err, &ce):
		return fmt.Sprintf("read it again with ckpt_show and retry with if_rev %d", ce.Have)
	case errors.As(err, &re):
		if re.Forcible {
			return "set force to true to go on anyway"
		}
		return ""
	}
	switch code {
	case ckpt.CodeNotResumable:
		return "set force to true to go on anyway"
	case ckpt.CodeNotFound:
		return "ckpt_list shows the checkpoints there are; ckpt_start creates one"
	case ckpt.CodeCorrupt:
		return "the store needs ckpt check and ckpt repair, run by a person"
	case ckpt.CodeCycleLimit:
		return "stop and ask for help, or raise max_cycles with ckpt_update"
	case ckpt.CodeExists:
		return "use another id, or continue the existing work with ckpt_resume"
	}
	return ""
}
