package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ckpt-dev/ckpt"
)

// TestEveryDateStyle: times that come back as text (a Store's first,
// unprepared Gets and appends; List, by the simple protocol) must read
// whatever DateStyle the database or the connection string sets: a
// Store asks for ISO. Before, a database set to 'SQL, DMY' made a fresh
// Store's Get fail ("invalid PostgreSQL date/time value").
func TestEveryDateStyle(t *testing.T) {
	ctx := context.Background()
	_, dsn := openStore(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var db string
	if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct{ database, conn string }{{"", ""}, {"SQL, DMY", ""}, {"German", "Postgres, DMY"}} {
		if c.database != "" {
			if _, err := conn.Exec(ctx, fmt.Sprintf("ALTER DATABASE %q SET DateStyle = '%s'", db, c.database)); err != nil {
				t.Fatal(err)
			}
		}
		conf := dsn
		if c.conn != "" {
			conf += " datestyle='" + c.conn + "'"
		}
		id := fmt.Sprint("ds/", i)
		s := openSecond(t, conf)
		mustAppend(t, s, id, created("style"))
		beat := time.Now().Add(-time.Minute)
		if err := s.Beat(ctx, id, ckpt.Signal{At: beat}); err != nil {
			t.Fatal(err)
		}
		fresh := openSecond(t, conf) // its first Get and append go unprepared
		got, err := fresh.Get(ctx, id, 0)
		if err != nil {
			t.Fatalf("DateStyle %q (connection %q): Get: %v", c.database, c.conn, err)
		}
		if _, err := fresh.Append(ctx, id, note("after a read"), ckpt.AppendOptions{}); err != nil {
			t.Fatalf("DateStyle %q (connection %q): Append: %v", c.database, c.conn, err)
		}
		page, err := fresh.List(ctx, ckpt.ListOptions{Filter: ckpt.Filter{Prefix: id}, Limit: 10})
		if err != nil {
			t.Fatalf("DateStyle %q (connection %q): List: %v", c.database, c.conn, err)
		}
		if got.Heartbeat.LastBeat.IsZero() || len(page.Items) != 1 || page.Items[0].Rev != 2 || !page.Items[0].Heartbeat.LastBeat.Equal(got.Heartbeat.LastBeat) {
			t.Fatalf("DateStyle %q (connection %q): List gave %+v, want %s at rev 2 beaten at %s", c.database, c.conn, page.Items, id, got.Heartbeat.LastBeat)
		}
	}
}
