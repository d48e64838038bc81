// Package apicalltest holds test support shared by the GitHub and Linear
// tracker tests, in the manner of net/http/httptest.
package apicalltest

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/tracker"
)

// StalledServer starts a local server that accepts every request and never
// answers it until the client gives up, and returns its URL. The server is
// closed when t's test ends.
func StalledServer(t testing.TB) string {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	// Registered after srv.Close, so it runs first and lets any handler
	// still waiting return before Close waits for it.
	t.Cleanup(func() { close(release) })
	return srv.URL
}

// RequireTimeout fails t unless err is a *tracker.Error of KindTimeout that
// also matches tracker.ErrUnreachable.
func RequireTimeout(t testing.TB, err error) {
	t.Helper()
	var e *tracker.Error
	if !errors.As(err, &e) || e.Kind != tracker.KindTimeout || !errors.Is(err, tracker.ErrUnreachable) {
		t.Fatalf("err = %#v", err)
	}
}
