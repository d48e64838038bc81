package pgtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestProxyStallsAndCuts checks what the partition tests rely on: a
// stalled connection gets no answer (and no error: the bytes are held)
// until Heal, when the answer arrives; a stall picks connections by
// application_name; Cut ends the open connections and refuses new ones
// until Heal.
func TestProxyStallsAndCuts(t *testing.T) {
	db := cluster.NewDatabase(t)
	p := NewProxy(t, &cluster)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	connect := func(name string) *pgx.Conn {
		conn, err := pgx.Connect(ctx, p.DSN(db)+" application_name="+name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		return conn
	}
	held, other := connect("held"), connect("other")
	if n := p.Stall(func(name string) bool { return name == "held" }); n != 1 {
		t.Fatalf("stalled %d connections, want 1", n)
	}
	answered := make(chan error, 1)
	go func() {
		var n int
		answered <- held.QueryRow(ctx, "SELECT 7").Scan(&n)
	}()
	if err := other.Ping(ctx); err != nil {
		t.Fatalf("a connection not stalled: %v", err)
	}
	select {
	case err := <-answered:
		t.Fatalf("a stalled connection was answered: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	p.Heal()
	if err := <-answered; err != nil {
		t.Fatalf("after Heal the held query failed: %v", err)
	}
	p.Cut()
	if err := other.Ping(ctx); err == nil {
		t.Fatal("a connection was answered after Cut")
	}
	if c, err := pgconn.Connect(ctx, p.DSN(db)); err == nil {
		c.Close(ctx)
		t.Fatal("a new connection was made while cut")
	}
	p.Heal()
	connect("again")
	got := slices.DeleteFunc(p.Conns(), func(name string) bool { return name == "(cancel)" })
	if !slices.Equal(got, []string{"held", "other", "again"}) {
		t.Fatalf("connections made: %q", got)
	}
}
