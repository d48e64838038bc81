package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// TestNotifiesOnlyWhileSomebodyListens: a Store's wake-ups cost the
// database a transaction each (an xid, a commit record, the database-wide
// notify lock), so a Store sends none while no Watch listens on its
// database; once one listens, its appends wake it again and the change
// reaches it.
func TestNotifiesOnlyWhileSomebodyListens(t *testing.T) {
	ctx := context.Background()
	writer, dsn := openStore(t)
	defer writer.Close()
	mustAppend(t, writer, "n", created("notify"))
	waitFor(t, "the notifier's first look for a listener", func() bool {
		_, checks := pgstore.Notifies(writer)
		return checks > 0
	})
	for i := range 3 {
		mustAppend(t, writer, "n", note(fmt.Sprint("unheard ", i)))
	}
	if sent, checks := pgstore.Notifies(writer); sent != 0 {
		t.Fatalf("with nobody listening the Store sent %d NOTIFYs (%d looks)", sent, checks)
	}

	reader := openSecond(t, dsn)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan ckpt.Change, 100)
	watching := make(chan error, 1)
	go func() {
		watching <- reader.Watch(wctx, ckpt.CursorNow, func(c ckpt.Change) error { got <- c; return nil })
	}()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	waitFor(t, "the reader's listening lock", func() bool {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1668051054 AND mode = 'ShareLock' AND granted AND database = "+thisDB).Scan(&n)
		return err == nil && n == 1
	})
	// The writer may have found nobody a moment ago: it looks again after
	// its quiet second, at an append.
	for i := 0; ; i++ {
		mustAppend(t, writer, "n", note(fmt.Sprint("heard ", i)))
		if sent, _ := pgstore.Notifies(writer); sent > 0 {
			break
		}
		if i == 600 {
			t.Fatal("the Store never woke a listening reader")
		}
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case c := <-got:
		if c.ID != "n" {
			t.Errorf("the reader got %+v", c)
		}
	case err := <-watching:
		t.Fatalf("Watch ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the reader got no change in 30 s")
	}
	cancel()
	<-watching
	waitFor(t, "the reader's lock to go with its Watch", func() bool {
		var n int
		err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = 1668051054 AND database = "+thisDB).Scan(&n)
		return err == nil && n == 0
	})
}

// thisDB is the OID of the connection's database, in SQL: advisory locks
// are per database, and pg_locks shows every database's.
const thisDB = "(SELECT oid FROM pg_database WHERE datname = current_database())"

// waitFor polls cond every 10 ms for up to 30 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}
