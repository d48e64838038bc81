package remote_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/httpapi"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/remote"
)

// Two replicas over one PostgreSQL database keep their tokens in it: a
// token created through one is accepted by the other at once, and once
// revoked through one it is refused by the other as soon as the
// revocation's notification arrives (though B keeps the tokens it found)
// and its open stream there ends. The database holds no secret.
func TestReplicasShareTokensInTheDatabase(t *testing.T) {
	t.Parallel()
	dsn := cluster.DSN(cluster.NewDatabase(t))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := pgstoreOpen(dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var urls []string
	var tokens []*server.PGTokens
	for range 2 {
		ts, err := server.OpenPGTokens(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer ts.Close()
		srv, err := server.New(st, server.Options{Tokens: ts, Logger: slog.New(slog.DiscardHandler),
			TokenWatch: server.NewTokenWatch(ts, 100*time.Millisecond, nil)})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(srv)
		defer hs.Close()
		urls, tokens = append(urls, hs.URL), append(tokens, ts)
	}
	admin, err := server.Bootstrap(ctx, tokens[0], time.Now())
	if err != nil || admin == "" {
		t.Fatalf("Bootstrap: %q %v", admin, err)
	}
	if again, err := server.Bootstrap(ctx, tokens[1], time.Now()); again != "" || err != nil {
		t.Fatalf("the second replica made another admin token: %q %v", again, err)
	}
	a, _ := remote.New(urls[0], remote.Options{Token: admin, Attempts: 1})
	info, err := a.CreateToken(ctx, httpapi.TokenInfo{Scope: "write", Prefix: "kai-7", Agent: "kai-7"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := remote.New(urls[1], remote.Options{Token: info.Token, Attempts: 1})
	if _, err := b.Append(ctx, "kai-7/a", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatalf("a token made through replica A, used at once on B: %v", err)
	}
	stored, err := tokens[1].List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret := info.Token[strings.LastIndex(info.Token, "_")+1:]
	for _, tok := range stored {
		if strings.Contains(tok.Hash, secret) || tok.Hash == "" {
			t.Errorf("token %s is stored with hash %q: want the secret's SHA-256, never the secret", tok.ID, tok.Hash)
		}
	}
	done := make(chan error, 1)
	go func() { done <- b.Watch(ctx, "", func(ckpt.Change) error { return nil }) }()
	time.Sleep(200 * time.Millisecond) // let the stream open on B
	if err := a.RevokeToken(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	// B found the token a moment ago and keeps it; A's revocation reaches
	// it by notification, well before B would ask the database again
	// (5 s): within moments, not at once, as the notification travels.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err := b.List(ctx, ckpt.ListOptions{})
		if errors.Is(err, ckpt.ErrUnauthenticated) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a token revoked through A, used on B 3 s later: %v, want unauthenticated", err)
		}
	}
	select {
	case err := <-done:
		if !errors.Is(err, ckpt.ErrUnauthenticated) {
			t.Errorf("B's stream of the revoked token ended with %v", err)
		}
	case <-ctx.Done():
		t.Error("B's stream of a token revoked through A is still open")
	}
}
