package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/pgtest"
	"github.com/ckpt-dev/ckpt/internal/server"
)

// listenerName is the application_name of PGTokens' listening connection.
const listenerName = "ckpt token listener"

// TestRevocationReachesAReplicaWhoseListenerIsCut: replica B reaches the
// database through a TCP proxy. Its connection listening for revocations
// is stalled, as a partition or a firewall that silently drops an idle
// connection would, while its other connections work. A token revoked
// through replica A then never announces itself to B, yet B refuses it
// once its cache stops being trusted (PGTokenTrust after the revocation
// at most: no request that starts later is let in), and B's listener
// replaces the dead connection by itself.
func TestRevocationReachesAReplicaWhoseListenerIsCut(t *testing.T) {
	t.Parallel()
	start := time.Now()
	db := cluster.NewDatabase(t)
	proxy := pgtest.NewProxy(t, &cluster)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a bound on a hang
	defer cancel()
	a, err := server.OpenPGTokens(ctx, cluster.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := server.OpenPGTokens(ctx, proxy.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	tok, bearer, err := server.NewToken(server.ScopeWrite, "kai-7", "kai-7", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(ctx, tok); err != nil {
		t.Fatal(err)
	}
	// B's first lookup starts its listener; wait until it listens.
	if _, err := server.Authenticate(ctx, b, bearer, time.Now()); err != nil {
		t.Fatalf("a fresh token on B: %v", err)
	}
	waitListening(t, ctx, db, 1)
	if _, err := server.Authenticate(ctx, b, bearer, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := proxy.Stall(func(name string) bool { return name == listenerName }); n != 1 {
		t.Fatalf("stalled %d listener connections, want 1", n)
	}
	if err := a.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	t.Logf("stalled and revoked after %v", revoked.Sub(start).Round(time.Millisecond))
	for {
		start := time.Now()
		_, err := server.Authenticate(ctx, b, bearer, start)
		if errors.Is(err, ckpt.ErrUnauthenticated) {
			break
		}
		if err != nil {
			t.Fatalf("the revoked token on B: %v, want unauthenticated", err)
		}
		if start.Sub(revoked) > server.PGTokenTrust {
			t.Fatalf("B let in a token revoked %v before, its listener cut (the bound is %v)", start.Sub(revoked).Round(time.Millisecond), server.PGTokenTrust)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	// B took the silent connection for dead and listens on a new one;
	// a revocation through A reaches it again.
	t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
	waitListening(t, ctx, db, 2)
	t.Logf("listening again after %v", time.Since(start).Round(time.Millisecond))
	if n := countListeners(proxy); n < 2 {
		t.Fatalf("%d token listener connections made through the proxy, want 2", n)
	}
	tok2, bearer2, err := server.NewToken(server.ScopeRead, "", "", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(ctx, tok2); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Authenticate(ctx, b, bearer2, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := a.Revoke(ctx, tok2.ID); err != nil {
		t.Fatal(err)
	}
	// B found the token a moment ago and keeps it; the notification of its
	// revocation reaches B's new listener within moments.
	for {
		_, err := server.Authenticate(ctx, b, bearer2, time.Now())
		if errors.Is(err, ckpt.ErrUnauthenticated) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("a token revoked through A after B's listener came back: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
}

// waitListening waits until n token listener connections are listening
// in database db (by pg_stat_activity: a stalled one is still there).
func waitListening(t *testing.T, ctx context.Context, db string, n int) {
	t.Helper()
	conn, err := pgx.Connect(ctx, cluster.DSN(db))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for {
		var got int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND query <> ''", listenerName).Scan(&got)
		if err != nil {
			t.Fatal(err)
		}
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d token listener connections listen, want %d", got, n)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// countListeners counts the token listener connections made through p.
func countListeners(p *pgtest.Proxy) int {
	n := 0
	for _, name := range p.Conns() {
		if name == listenerName {
			n++
		}
	}
	return n
}
