package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestLeaseIsHeldByOneServer: of two stores over one database (two
// servers), one holds a lease at a time; the other takes it when it is
// released, and again when the holder's connection is killed, which the
// holder learns through lost. A lease never blocks appends.
func TestLeaseIsHeldByOneServer(t *testing.T) {
	ctx := context.Background()
	a, dsn := openStore(t)
	defer a.Close()
	b, err := pgstore.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	lostA, releaseA, err := a.Lead(ctx, "webhooks")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "kai-7/x", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		t.Fatalf("an append while a lease is held: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, _, err = b.Lead(short, "webhooks")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second holder while the first holds it: err %v, want it to wait until its context ends", err)
	}
	if _, releaseOther, err := b.Lead(ctx, "mirrors"); err != nil {
		t.Fatalf("another lease's name: %v", err)
	} else {
		releaseOther()
	}

	type held struct {
		lost    <-chan struct{}
		release func()
		err     error
	}
	got := make(chan held, 1)
	go func() { l, r, err := b.Lead(ctx, "webhooks"); got <- held{l, r, err} }()
	releaseA()
	releaseA() // harmless twice
	hb := <-got
	if hb.err != nil {
		t.Fatalf("b after a released: %v", hb.err)
	}
	select {
	case <-lostA:
		t.Fatal("a released lease reads lost")
	default:
	}

	// Kill b's session: b learns it lost the lease, and a can take it.
	go func() { l, r, err := a.Lead(ctx, "webhooks"); got <- held{l, r, err} }()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l
		WHERE l.locktype = 'advisory' AND l.classid = $1 AND l.objsubid = 2 AND l.granted`, int64(0x636b7074)).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminating the holder: %d sessions, %v", killed, err)
	}
	select {
	case <-hb.lost:
	case <-time.After(time.Minute):
		t.Fatal("b's killed lease never read lost")
	}
	hb.release()
	ha := <-got
	if ha.err != nil {
		t.Fatalf("a after b's session died: %v", ha.err)
	}
	ha.release()
}
