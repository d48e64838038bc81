package remote_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/pgstore"
	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/storetest"
)

// The fleet's proofs: several servers over one backend, servers killed
// under load, a change-feed consumer across a restart.

// backendKind opens stores over one shared backend: each call of open is
// another process's handle on the same data.
type backendKind struct {
	name string
	open func(t *testing.T) func() ckpt.Store
}

func sharedBackends(t *testing.T) []backendKind {
	return []backendKind{
		{"filestore", func(t *testing.T) func() ckpt.Store {
			dir := filepath.Join(t.TempDir(), filestore.StoreDirName)
			first := newFileStoreAt(t, dir, true)
			used := false
			return func() ckpt.Store {
				if !used {
					used = true
					return first
				}
				return newFileStoreAt(t, dir, false)
			}
		}},
		{"pgstore", func(t *testing.T) func() ckpt.Store {
			cluster.Need(t)
			dsn := cluster.DSN(cluster.NewDatabase(t), "pool_max_conns=32")
			return func() ckpt.Store {
				st, err := pgstore.Open(context.Background(), dsn)
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
		}},
	}
}

func newFileStoreAt(t testing.TB, dir string, init bool) *filestore.Store {
	t.Helper()
	var st *filestore.Store
	var err error
	if init {
		st, err = filestore.Init(dir, filestore.Options{})
	} else {
		st, err = filestore.Open(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// fleetTokens is one token file several servers share.
func fleetTokens(t *testing.T) (*server.FileTokens, string) { return fleetTokensB(t) }

func fleetTokensB(t testing.TB) (*server.FileTokens, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), server.TokenFileName)
	tokens, err := server.OpenFileTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := server.Bootstrap(context.Background(), tokens, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return tokens, admin
}

// running is a server listening on a real socket, stopped abruptly by kill.
type running struct {
	addr string
	kill context.CancelFunc
	done chan error
}

// run serves backend on addr ("127.0.0.1:0" for any port) until killed.
func run(t *testing.T, backend ckpt.Store, tokens server.TokenStore, addr string) *running {
	t.Helper()
	srv, err := server.New(backend, server.Options{Tokens: tokens, Keepalive: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	for try := 0; ; try++ {
		if ln, err = net.Listen("tcp", addr); err == nil || try == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond) // the old socket is still closing
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{addr: ln.Addr().String(), kill: cancel, done: make(chan error, 1)}
	go func() { r.done <- srv.Serve(ctx, ln, nil, 0) }()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

func (r *running) url() string { return "http://" + r.addr }

// stop kills the server at once: no grace, open connections cut.
func (r *running) stop(t *testing.T) {
	r.kill()
	if err := <-r.done; err != nil {
		t.Errorf("server stopped with %v", err)
	}
	r.done <- nil // for the cleanup
}

func dial(t testing.TB, url, token string, attempts int) *remote.Store {
	t.Helper()
	c, err := remote.New(url, remote.Options{Token: token, Attempts: attempts, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTwoServersOneBackend: 64 clients write through two servers over one
// backend, each to its own checkpoint and all to a shared one, with plain
// keyed appends and read-modify-writes (ckpt.Update): every revision is
// exact, no key is applied twice, every history verifies.
func TestTwoServersOneBackend(t *testing.T) {
	t.Parallel()
	for _, kind := range sharedBackends(t) {
		t.Run(kind.name, func(t *testing.T) {
			open := kind.open(t)
			tokens, admin := fleetTokens(t)
			a, b := open(), open()
			defer a.Close()
			defer b.Close()
			servers := []*running{run(t, a, tokens, "127.0.0.1:0"), run(t, b, tokens, "127.0.0.1:0")}
			const clients, own, shared = 64, 6, 3
			ctx := context.Background()
			setup := dial(t, servers[0].url(), admin, 6)
			if _, err := setup.Append(ctx, "shared", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for i := range clients {
				wg.Go(func() {
					errs <- fleetClient(ctx, []*remote.Store{dial(t, servers[i%2].url(), admin, 6), dial(t, servers[(i+1)%2].url(), admin, 6)}, i, own, shared)
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			for i := range clients {
				wantHistory(t, a, fmt.Sprintf("own/%02d", i), own)
			}
			wantHistory(t, a, "shared", 1+clients*(shared+1))
			storetest.Verify(t, a)
		})
	}
}

// fleetClient is one agent: it creates its own checkpoint and appends to
// it through one server, and appends to the shared checkpoint through
// both, alternating; then one Update of the shared checkpoint.
func fleetClient(ctx context.Context, via []*remote.Store, i, own, shared int) error {
	id := fmt.Sprintf("own/%02d", i)
	if _, err := via[0].Append(ctx, id, ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Created{}), ckpt.AppendOptions{}); err != nil {
		return fmt.Errorf("%s: create: %w", id, err)
	}
	for j := 1; j < own; j++ {
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Note{Text: fmt.Sprint(j)})
		e.Key = fmt.Sprintf("%s-%d", id, j)
		if _, err := via[j%2].Append(ctx, id, e, ckpt.AppendOptions{IfRev: int64(j)}); err != nil {
			return fmt.Errorf("%s: note %d: %w", id, j, err)
		}
	}
	for j := range shared {
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Note{Text: id})
		e.Key = fmt.Sprintf("shared-%s-%d", id, j)
		if _, err := via[j%2].Append(ctx, "shared", e, ckpt.AppendOptions{}); err != nil {
			return fmt.Errorf("%s: shared %d: %w", id, j, err)
		}
	}
	// A read-modify-write among 64 writers of one checkpoint may lose
	// ckpt.UpdateAttempts races in a row; a caller then tries again.
	for {
		_, err := ckpt.Update(ctx, via[1], "shared", func(c *ckpt.Checkpoint) (ckpt.Event, error) {
			e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Note{Text: fmt.Sprintf("%s saw %d", id, c.Rev)})
			e.Key = "update-" + id
			return e, nil
		})
		if !errors.Is(err, ckpt.ErrConflict) {
			return err
		}
	}
}

// wantHistory checks that checkpoint id has exactly n events, dense, and
// no key twice.
func wantHistory(t *testing.T, st ckpt.Store, id string, n int) {
	t.Helper()
	h, err := st.History(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	if len(h) != n {
		t.Errorf("%s has %d events, want %d", id, len(h), n)
	}
	keys := map[string]bool{}
	for i, e := range h {
		if e.Seq != int64(i+1) {
			t.Errorf("%s: event %d has seq %d", id, i, e.Seq)
		}
		if e.Key != "" && keys[e.Key] {
			t.Errorf("%s: key %s applied twice", id, e.Key)
		}
		keys[e.Key] = true
	}
}

// TestServerKilledMidLoad: a server is killed (its connections cut, no
// grace) while 16 clients append, and a new one starts on the same address
// over the backend reopened. Clients see retryable errors, retry with the
// same key, and succeed; every acknowledged write is there exactly once;
// a change-feed consumer that was watching through the server all along
// sees every change once, in each checkpoint's order.
func TestServerKilledMidLoad(t *testing.T) {
	t.Parallel()
	mem := memstore.New()
	kinds := []backendKind{sharedBackends(t)[0], sharedBackends(t)[1], {"memstore", func(*testing.T) func() ckpt.Store {
		return func() ckpt.Store { return mem }
	}}}
	for _, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			open := kind.open(t)
			tokens, admin := fleetTokens(t)
			backend := open()
			srv := run(t, backend, tokens, "127.0.0.1:0")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			watcher := dial(t, srv.url(), admin, 0)
			head, err := watcher.Head(ctx)
			if err != nil {
				t.Fatal(err)
			}
			const clients, each = 16, 30
			total := clients * each
			seen := make(chan ckpt.Change, total*2)
			watchCtx, stopWatch := context.WithCancel(ctx)
			watchDone := make(chan error, 1)
			go func() {
				watchDone <- watcher.Watch(watchCtx, head, func(c ckpt.Change) error { seen <- c; return nil })
			}()

			var acked, retryable atomic.Int64
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for i := range clients {
				wg.Go(func() { errs <- killClient(ctx, dial(t, srv.url(), admin, 1), i, each, &acked, &retryable) })
			}
			for acked.Load() < int64(total/3) {
				time.Sleep(5 * time.Millisecond)
			}
			srv.stop(t)
			// A killed process closes nothing: the old handle is left as it
			// is (closed when the test ends), the new server gets a new one.
			old := backend
			defer closeSoon(t, old)
			// Clients meet a dead server before the new one listens.
			for deadline := time.Now().Add(time.Minute); retryable.Load() == 0 && time.Now().Before(deadline); {
				time.Sleep(5 * time.Millisecond)
			}
			backend = open()
			defer backend.Close()
			run(t, backend, tokens, srv.addr)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Error(err)
				}
			}
			if retryable.Load() == 0 {
				t.Errorf("no client saw the server go away")
			}
			for i := range clients {
				wantHistory(t, backend, fmt.Sprintf("k/%02d", i), each)
			}
			storetest.Verify(t, backend)
			got := map[string]int64{}
			for n := 0; n < total; n++ {
				select {
				case c := <-seen:
					if c.Rev != got[c.ID]+1 {
						t.Fatalf("the consumer saw %s rev %d after rev %d", c.ID, c.Rev, got[c.ID])
					}
					got[c.ID] = c.Rev
				case <-time.After(time.Minute):
					t.Fatalf("the consumer saw %d of %d changes", n, total)
				}
			}
			stopWatch()
			if err := <-watchDone; !errors.Is(err, context.Canceled) {
				t.Errorf("Watch: %v", err)
			}
			select {
			case c := <-seen:
				t.Errorf("the consumer saw a change twice or one too many: %+v", c)
			default:
			}
		})
	}
}

// killClient appends each events to its own checkpoint, one attempt per
// call, retrying a retryable failure itself with the same key until it is
// acknowledged.
func killClient(ctx context.Context, c *remote.Store, i, each int, acked, retryable *atomic.Int64) error {
	id := fmt.Sprintf("k/%02d", i)
	for j := range each {
		e := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Note{Text: fmt.Sprint(j)})
		if j == 0 {
			e = ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: id}, ckpt.Created{})
		}
		e.Key = fmt.Sprintf("%s-%d", id, j)
		for {
			r, err := c.Append(ctx, id, e, ckpt.AppendOptions{})
			if err == nil {
				if r.Event.Seq != int64(j+1) {
					return fmt.Errorf("%s: key %s acknowledged as seq %d, want %d", id, e.Key, r.Event.Seq, j+1)
				}
				acked.Add(1)
				break
			}
			if !ckpt.Retryable(err) {
				return fmt.Errorf("%s: append %d: %w", id, j, err)
			}
			retryable.Add(1)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	return nil
}

// closeSoon closes st, and reports a Close that hangs instead of hanging.
func closeSoon(t *testing.T, st ckpt.Store) {
	done := make(chan error, 1)
	go func() { done <- st.Close() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Errorf("closing the killed server's store handle (%T) did not return in a minute", st)
	}
}

func pgstoreOpen(dsn string) (*pgstore.Store, error) { return pgstore.Open(context.Background(), dsn) }
