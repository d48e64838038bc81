package agenttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// maxBody bounds a request body the mock reads: clients send whole
// conversations, but never this much in a test.
const maxBody = 64 << 20

// Server is a mock of the three model APIs on one loopback port:
//
//	POST /v1/messages                              Anthropic Messages (SSE when "stream": true)
//	POST /v1/responses                             OpenAI Responses (SSE)
//	POST /v1beta/models/M:generateContent          Gemini (JSON)
//	POST /v1beta/models/M:streamGenerateContent    Gemini (SSE with alt=sse)
//
// Every request is recorded (Requests) before it is answered. Anything else
// gets 404 and is recorded too, so a test can see what a client asked for.
type Server struct {
	URL string // http://127.0.0.1:PORT

	mu       sync.Mutex
	script   Script
	requests []Request
	other    []string
	srv      *http.Server
	ln       net.Listener
}

// NewServer starts a mock answering from script on a loopback port; it
// stops when the test ends.
func NewServer(t testing.TB, script Script) *Server {
	t.Helper()
	s, err := StartServer(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartServer starts a mock answering from script on a loopback port.
// Close stops it.
func StartServer(script Script) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("mock model API: %w", err)
	}
	s := &Server{script: script, ln: ln, URL: "http://" + ln.Addr().String()}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Close stops the server, dropping open streams.
func (s *Server) Close() { _ = s.srv.Close() }

// SetScript replaces the script for the requests that follow.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.script = script
	s.mu.Unlock()
}

// Requests returns the model requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Other returns the method and path of every request that was not a model
// request (404s), in order.
func (s *Server) Other() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.other...)
}

// ServeHTTP routes a request to the API it belongs to.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	var api string
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/messages") && !strings.Contains(path, "count_tokens"):
		api = "anthropic"
	case r.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		api = "openai"
	case r.Method == http.MethodPost && strings.Contains(path, "/models/") &&
		(strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		api = "gemini"
	default:
		s.mu.Lock()
		s.other = append(s.other, r.Method+" "+r.URL.RequestURI())
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	conv, err := parseConversation(api, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	// Gemini CLI's side requests (model routing, next-speaker check) use
	// generateContent and want JSON; the conversation streams. One object
	// answers both schemas.
	side := api == "gemini" && strings.HasSuffix(path, ":generateContent")
	s.mu.Lock()
	step, scripted := s.script.pick(conv.first, conv.turns)
	if side {
		step, scripted = Say(geminiSideAnswer), false
	}
	idx := len(s.requests)
	s.requests = append(s.requests, Request{
		API: api, Path: path, Body: body, First: conv.first, Turns: conv.turns,
		Texts: conv.texts, Script: scripted,
	})
	s.mu.Unlock()
	id := fmt.Sprintf("%d_%d", idx, conv.turns)
	switch api {
	case "anthropic":
		writeAnthropic(w, r, step, id, conv.stream)
	case "openai":
		writeOpenAI(w, r, step, id)
	case "gemini":
		writeGemini(w, r, step, strings.HasSuffix(path, ":streamGenerateContent"))
	}
}

// geminiSideAnswer is the JSON text answering Gemini CLI's unscripted
// generateContent calls: the router's {reasoning, model_choice} and the
// next-speaker check's {reasoning, next_speaker}.
const geminiSideAnswer = `{"reasoning":"scripted mock","model_choice":"flash","next_speaker":"user"}`

// sse writes one server-sent event and flushes it.
func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// sseHeaders starts an event stream.
func sseHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// wait sleeps d or until the client goes away.
func wait(r *http.Request, d time.Duration) {
	if d <= 0 {
		return
	}
	select {
	case <-time.After(d):
	case <-r.Context().Done():
	}
}

// toolArgs is a tool call's arguments as JSON text.
func toolArgs(c *ToolCall) string {
	if c.Input == nil {
		return "{}"
	}
	b, _ := json.Marshal(c.Input)
	return string(b)
}
