package remote_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/remote"
)

// TestAnAttemptThatTimesOutIsRetried: a server that holds a request past
// the client's limit for one attempt (as one whose database waits for a
// dead standby does) is no answer, unavailable and retried, like a broken
// connection, not the end of the call: a hook's write is then spooled,
// not lost.
func TestAnAttemptThatTimesOutIsRetried(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	// Attempts are counted as the client sends them: under load the
	// server's handler may not have run before an attempt's 50 ms ran out.
	got := &countingTransport{next: http.DefaultTransport}
	c, err := remote.New(srv.URL, remote.Options{Timeout: 50 * time.Millisecond, Attempts: 2, Backoff: time.Millisecond,
		HTTPClient: &http.Client{Transport: got}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Get(context.Background(), "team/a", 0)
	if !errors.Is(err, ckpt.ErrUnavailable) || !ckpt.Retryable(err) {
		t.Fatalf("a call whose attempts time out: %v, want unavailable (retryable)", err)
	}
	if n := got.n.Load(); n != 2 {
		t.Fatalf("the client sent %d attempts, want 2", n)
	}
}

// countingTransport counts the requests sent through it.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int32
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}
