package remote_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/remote"
)

// answerLosingTransport delivers every request and records its
// Ckpt-Key-Origin; the answer to the first append is dropped, as when the
// connection breaks after the server applied it.
type answerLosingTransport struct {
	mu      sync.Mutex
	origins []string
	lost    bool
}

func (a *answerLosingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, httpapi.PathEvents) {
		return resp, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.origins = append(a.origins, r.Header.Get(httpapi.HeaderKeyOrigin))
	if err == nil && !a.lost {
		a.lost = true
		resp.Body.Close()
		return nil, errors.New("connection reset after the request was applied")
	}
	return resp, err
}

// TestAMadeKeyCrossesTheServer: the key the client makes for an append goes
// to the server as new, so that its PostgreSQL store writes no ckpt_keys
// row for it; when the answer is lost, the client's retry goes as resent
// and the server replays the applied write from the history instead of
// appending it again.
func TestAMadeKeyCrossesTheServer(t *testing.T) {
	t.Parallel()
	cluster.Need(t)
	ctx := context.Background()
	dsn := cluster.DSN(cluster.NewDatabase(t))
	backend, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	s := serve(t, backend)
	tr := &answerLosingTransport{lost: true} // the create's answer arrives
	c, err := remote.New(s.http.URL, remote.Options{Token: s.admin, Attempts: 3, HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	const id = "fleet/made-key"
	if _, err := c.Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.lost = false // lose the note's first answer
	tr.mu.Unlock()
	res, err := c.Append(ctx, id, ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Note{Text: "once"}), ckpt.AppendOptions{})
	if err != nil || res.Event.Seq != 2 {
		t.Fatalf("the note whose first answer was lost: %+v, %v; want seq 2", res, err)
	}
	h, err := c.History(ctx, id, 1, 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("history: %d events, %v; want the create and the note once", len(h), err)
	}
	tr.mu.Lock()
	origins := strings.Join(tr.origins, ",")
	tr.mu.Unlock()
	if origins != "new,new,resent" {
		t.Errorf("Ckpt-Key-Origin of the three sends: %s; want new,new,resent", origins)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM ckpt_keys").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("ckpt_keys holds %d rows (%v); want none: every key was made by the client", rows, err)
	}
}
