package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// watchUntilEnd follows the feed as c until the stream ends, recording
// the IDs of the changes it got.
func watchUntilEnd(ctx context.Context, c interface {
	Watch(context.Context, string, func(ckpt.Change) error) error
}, got *[]string, mu *sync.Mutex) chan error {
	done := make(chan error, 1)
	go func() {
		done <- c.Watch(ctx, "", func(ch ckpt.Change) error {
			mu.Lock()
			defer mu.Unlock()
			*got = append(*got, ch.ID)
			return nil
		})
	}()
	return done
}

// A stream opened before its token is revoked ends with unauthenticated
// once the token is revoked: at once through this server's API, and
// within a recheck when the token store changed elsewhere (another
// replica, ckpt token revoke).
func TestRevokedTokenEndsItsStream(t *testing.T) {
	for _, how := range []string{"api", "elsewhere"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t, server.Options{Keepalive: 50 * time.Millisecond})
			reader := f.token(t, server.ScopeRead, "", "")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			var got []string
			done := watchUntilEnd(ctx, f.client(t, reader), &got, &mu)
			admin := f.client(t, f.admin)
			if _, err := admin.Append(ctx, "a/one", created("t"), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 })
			id := reader[len("ckpt_"):strings.LastIndex(reader, "_")]
			if how == "api" {
				if err := admin.RevokeToken(ctx, id); err != nil {
					t.Fatal(err)
				}
			} else if err := f.tokens.Revoke(ctx, id); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				if !errors.Is(err, ckpt.ErrUnauthenticated) {
					t.Fatalf("the revoked token's stream ended with %v, want unauthenticated", err)
				}
			case <-ctx.Done():
				t.Fatal("the stream of a revoked token is still open after 30 s")
			}
			if _, err := admin.Append(ctx, "a/two", created("t"), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A token with --ttl stops being accepted when it expires, and its open
// stream ends then.
func TestExpiredTokenEndsItsStream(t *testing.T) {
	f := newFixture(t, server.Options{Keepalive: 50 * time.Millisecond})
	tok, bearer, err := server.NewToken(server.ScopeRead, "", "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tok.ExpiresAt = time.Now().Add(time.Second)
	if err := f.tokens.Add(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := f.client(t, bearer)
	var mu sync.Mutex
	var got []string
	done := watchUntilEnd(ctx, c, &got, &mu)
	select {
	case err := <-done:
		if !errors.Is(err, ckpt.ErrUnauthenticated) {
			t.Fatalf("the expired token's stream ended with %v, want unauthenticated", err)
		}
	case <-ctx.Done():
		t.Fatal("the stream of an expired token is still open after 30 s")
	}
	if _, err := c.List(ctx, ckpt.ListOptions{}); !errors.Is(err, ckpt.ErrUnauthenticated) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired token listed: %v", err)
	}
}

// A token that reads only its prefix follows only the changes under it,
// and resuming after a change it was not shown misses nothing of its own.
func TestReadPrefixTokenSeesOnlyItsChanges(t *testing.T) {
	f := newFixture(t, server.Options{Keepalive: 50 * time.Millisecond})
	tok, bearer, err := server.NewToken(server.ScopeRead, "team-a", "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	tok.ReadPrefix = true
	if err := f.tokens.Add(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := f.client(t, f.admin)
	for _, id := range []string{"team-a/x", "team-ab/y", "team-b/z", "team-a/w", "team-a-evil/v"} {
		if _, err := admin.Append(ctx, id, created("t"), ckpt.AppendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	err = f.client(t, bearer).Watch(ctx, "", func(ch ckpt.Change) error {
		got = append(got, ch.ID)
		if len(got) == 2 {
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) || strings.Join(got, " ") != "team-a/x team-a/w" {
		t.Errorf("a team-a reader followed %v (%v), want team-a/x team-a/w only", got, err)
	}
}

var errEnough = errors.New("enough")

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("gave up after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
