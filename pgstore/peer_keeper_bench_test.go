package pgstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/keeper"
	"github.com/ckpt-dev/ckpt/pgstore"
)

// peerKeeper is BenchmarkPeer's keeper contender: one keeper (keeper.Serve,
// in this process) holding one Store (pool_max_conns=n, as the shared
// contender), and n writers, each with its own keeper.Client over the
// keeper's Unix socket, as n `ckpt mcp` servers of one user have. Each
// writer appends notes to its own checkpoint, after one untimed created
// and note. (This external test package may import internal/keeper:
// architecture_test.go checks what packages import, not their tests, and
// keeper links no driver, so there is no cycle.)
func peerKeeper(dsn string) func(b *testing.B, n int) (func(int) (time.Duration, error), func()) {
	round := 0
	return func(b *testing.B, n int) (func(int) (time.Duration, error), func()) {
		if !keeper.Supported {
			b.Skip("the keeper runs on Linux only")
		}
		round++
		root, err := os.MkdirTemp("", "pk") // short: a socket's path is limited
		if err != nil {
			b.Fatal(err)
		}
		paths := keeper.PathsFor(dsn, func(k string) string {
			if k == "XDG_RUNTIME_DIR" {
				return root
			}
			return ""
		})
		ctx, stop := context.WithCancel(context.Background())
		ready, done := make(chan struct{}), make(chan error, 1)
		go func() {
			done <- keeper.Serve(ctx, keeper.Options{Paths: paths, Idle: time.Hour, Ready: func() { close(ready) },
				Open: func() (ckpt.Store, error) {
					return pgstore.Open(context.Background(), fmt.Sprintf("%s pool_max_conns=%d", dsn, n))
				}})
		}()
		select {
		case <-ready:
		case err := <-done:
			b.Fatalf("keeper: %v", err)
		}
		clients := make([]*keeper.Client, n)
		for w := range clients {
			if clients[w], err = keeper.Dial(paths); err != nil {
				b.Fatal(err)
			}
		}
		teardown := func() {
			for _, c := range clients {
				if c != nil {
					c.Close()
				}
			}
			stop()
			if err := <-done; err != nil {
				b.Errorf("keeper: %v", err)
			}
			os.RemoveAll(root)
		}
		id := func(w int) string { return fmt.Sprintf("peer/keeper-r%d-w%02d", round, w) }
		bg := context.Background()
		if err := writeAll(n, 1, func(w, _ int) error {
			_, err := clients[w].Append(bg, id(w), created("peer"), ckpt.AppendOptions{})
			return err
		}); err != nil {
			teardown()
			b.Fatal(err)
		}
		appendNote := func(w, i int) error {
			_, err := clients[w].Append(bg, id(w), note(fmt.Sprint("step ", i)), ckpt.AppendOptions{})
			return err
		}
		if err := writeAll(n, 1, appendNote); err != nil {
			teardown()
			b.Fatal(err)
		}
		return func(k int) (time.Duration, error) { return 0, writeAll(n, k, appendNote) }, teardown
	}
}
