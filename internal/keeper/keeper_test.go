package keeper

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
	"github.com/ckpt-dev/ckpt/storetest"
)

// testPaths are a keeper's files in a fresh private directory (short: a
// socket's path is limited to about 100 bytes).
func testPaths(t *testing.T) Paths {
	t.Helper()
	if !Supported {
		t.Skip("the keeper runs on Linux only")
	}
	root, err := os.MkdirTemp("", "kp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	env := func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return root
		}
		return ""
	}
	return PathsFor("postgres://test/db", env)
}

// serve runs a keeper of st until the test ends and returns its paths.
func serve(t *testing.T, st ckpt.Store) Paths {
	t.Helper()
	p := testPaths(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Serve(ctx, Options{Open: func() (ckpt.Store, error) { return st, nil }, Paths: p, Idle: time.Minute, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("Serve: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return p
}

// unclosing keeps the conformance suite's Close of the client from
// closing the store the keeper serves.
type unclosing struct{ ckpt.Store }

func (unclosing) Close() error { return nil }

// dialMemstore serves a memstore behind a keeper and dials it; the
// client is closed when t ends.
func dialMemstore(t *testing.T) (*memstore.Store, *Client) {
	t.Helper()
	st := memstore.New()
	c, err := Dial(serve(t, unclosing{st}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return st, c
}

// TestConformance runs the Store conformance suite against a keeper's
// client: every method, error and edge the stores honour comes through the
// socket the same.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) ckpt.Store {
		p := serve(t, unclosing{memstore.New()})
		c, err := Dial(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	})
}

// TestErrorsComeBackTyped: a store's refusals reach the client with the
// same message, the same sentinel and, for a conflict, the same
// *ckpt.ConflictError, as the store returned them.
func TestErrorsComeBackTyped(t *testing.T) {
	ctx := context.Background()
	st, c := dialMemstore(t)
	title := "t"
	created := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	if _, err := st.Append(ctx, "w", created, ckpt.AppendOptions{}); err != nil {
		t.Fatal(err)
	}
	note := ckpt.MustEvent(ckpt.EventNote, time.Time{}, ckpt.Actor{Agent: "a"}, ckpt.Note{Text: "n"})
	cases := []struct {
		name string
		call func(s ckpt.Store) error
		is   error
	}{
		{"not found", func(s ckpt.Store) error { _, err := s.Append(ctx, "nosuch", note, ckpt.AppendOptions{}); return err }, ckpt.ErrNotFound},
		{"exists", func(s ckpt.Store) error { _, err := s.Append(ctx, "w", created, ckpt.AppendOptions{}); return err }, ckpt.ErrExists},
		{"conflict", func(s ckpt.Store) error { _, err := s.Append(ctx, "w", note, ckpt.AppendOptions{IfRev: 7}); return err }, ckpt.ErrConflict},
		{"invalid id", func(s ckpt.Store) error { _, err := s.Get(ctx, "../x", 0); return err }, ckpt.ErrInvalid},
		{"revision past the end", func(s ckpt.Store) error { _, err := s.Get(ctx, "w", 9); return err }, ckpt.ErrNotFound},
	}
	for _, tc := range cases {
		direct, through := tc.call(st), tc.call(c)
		if direct == nil || through == nil {
			t.Fatalf("%s: direct %v, through the keeper %v: want errors", tc.name, direct, through)
		}
		if direct.Error() != through.Error() || !errors.Is(through, tc.is) || ckpt.ErrorCode(direct) != ckpt.ErrorCode(through) {
			t.Errorf("%s: through the keeper %q (%s), directly %q (%s)", tc.name, through, ckpt.ErrorCode(through), direct, ckpt.ErrorCode(direct))
		}
		var dc, tcf *ckpt.ConflictError
		if errors.As(direct, &dc) && (!errors.As(through, &tcf) || *tcf != *dc) {
			t.Errorf("%s: the conflict's detail is lost: %#v", tc.name, through)
		}
	}
}

// TestAHandOffIsAppliedOnce: an append through the keeper carries a key,
// so its direct retry after a lost answer replays it.
func TestAHandOffIsAppliedOnce(t *testing.T) {
	ctx := context.Background()
	st, c := dialMemstore(t)
	title := "t"
	res, err := c.Append(ctx, "w", ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}}), ckpt.AppendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Event.Key, "keeper-") {
		t.Fatalf("the hand-off has key %q", res.Event.Key)
	}
	retry := ckpt.MustEvent(ckpt.EventCreated, time.Time{}, ckpt.Actor{}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	retry.Key = res.Event.Key
	again, err := st.Append(ctx, "w", retry, ckpt.AppendOptions{})
	if err != nil || !again.Replayed || again.State.Rev != 1 {
		t.Fatalf("the direct retry: %+v, %v", again, err)
	}
}

// TestStrangersAreRefused: a directory open to others or owned by another
// user is refused before any socket in it is dialled, and a socket served
// by another user is refused after connecting; so is a client of another
// user at the keeper.
func TestStrangersAreRefused(t *testing.T) {
	p := serve(t, unclosing{memstore.New()})
	if err := checkDir(p.Dir, os.Getuid()+1); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a directory of another user: %v", err)
	}
	if err := os.Chmod(p.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Dial(p); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a directory open to others: Dial says %v", err)
	}
	if err := os.Chmod(p.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := dialSocket(p.Socket, os.Getuid()+1); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a socket served by another user: %v", err)
	}
	link := filepath.Join(filepath.Dir(p.Dir), "link")
	if err := os.Symlink(p.Dir, link); err != nil {
		t.Fatal(err)
	}
	if err := checkDir(link, os.Getuid()); !errors.Is(err, ErrUnsafeDir) {
		t.Errorf("a symbolic link: %v", err)
	}
	// The keeper's side: a peer of another user gets no answer.
	s := &server{uid: os.Getuid() + 1, st: memstore.New()}
	a, b, err := unixPair(t)
	if err != nil {
		t.Fatal(err)
	}
	go s.serveConn(a)
	_, _ = b.Write(request(OpHead).frame()) // may find the connection closed already
	if _, err := readFrame(b, maxAnswer); err == nil {
		t.Error("the keeper answered a peer of another user")
	}
}

// unixPair is a connected pair of Unix sockets.
func unixPair(t *testing.T) (*net.UnixConn, *net.UnixConn, error) {
	dir, err := os.MkdirTemp("", "kp")
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "s"), Net: "unix"})
	if err != nil {
		return nil, nil, err
	}
	defer ln.Close()
	b, err := net.DialUnix("unix", nil, ln.Addr().(*net.UnixAddr))
	if err != nil {
		return nil, nil, err
	}
	a, err := ln.AcceptUnix()
	if err != nil {
		return nil, nil, err
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b, nil
}

// TestIdleExit: a keeper with no request for its idle period returns and
// removes its socket; one asked to stop answers, then does the same.
func TestIdleExit(t *testing.T) {
	for _, stop := range []bool{false, true} {
		p := testPaths(t)
		idle := 50 * time.Millisecond
		if stop {
			idle = time.Hour
		}
		ready, done := make(chan struct{}), make(chan error, 1)
		go func() {
			done <- Serve(context.Background(), Options{Open: func() (ckpt.Store, error) { return memstore.New(), nil }, Paths: p, Idle: idle, Ready: func() { close(ready) }})
		}()
		<-ready
		if stop {
			c, err := Dial(p)
			if err != nil {
				t.Fatal(err)
			}
			if s, err := c.Status(); err != nil || s.PID != os.Getpid() {
				t.Fatalf("status: %+v, %v", s, err)
			}
			if _, err := c.Stop(); err != nil {
				t.Fatal(err)
			}
			c.Close()
		}
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("stop=%v: the keeper did not exit", stop)
		}
		if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the socket is left behind: %v", err)
		}
		if _, err := Dial(p); !errors.Is(err, ErrNoKeeper) {
			t.Errorf("dialling a keeper that exited: %v", err)
		}
	}
}

// TestAReplacedKeeperStops: a keeper whose program was replaced (an
// upgrade) stops at its next check, however busy its idle clock says it
// is, and removes its socket.
func TestAReplacedKeeperStops(t *testing.T) {
	p := testPaths(t)
	var replaced atomic.Bool
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), Options{Open: func() (ckpt.Store, error) { return memstore.New(), nil }, Paths: p, Idle: time.Hour,
			Ready: func() { close(ready) }, Replaced: replaced.Load, CheckEvery: 10 * time.Millisecond})
	}()
	<-ready
	c, err := Dial(p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Status(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the keeper stopped before its program was replaced: %v", err)
	default:
	}
	replaced.Store(true)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the replaced keeper did not stop")
	}
	if _, err := os.Stat(p.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the socket is left behind: %v", err)
	}
}

// TestEnabled: CKPT_KEEPER turns the keeper off, and so do a pinned clock
// and the direct retry of a hand-off.
func TestEnabled(t *testing.T) {
	for env, want := range map[string]bool{"": true, "CKPT_KEEPER=on": true, "CKPT_KEEPER=off": false, "CKPT_KEEPER=0": false,
		"CKPT_KEEPER=No": false, "CKPT_NOW=2026-01-15T14:30:00Z": false, EnvHandoffKey + "=keeper-1": false} {
		k, v, _ := strings.Cut(env, "=")
		if got := Enabled(func(key string) string {
			if key == k {
				return v
			}
			return ""
		}); got != want {
			t.Errorf("%s: Enabled %v, want %v", env, got, want)
		}
	}
}

// TestOneKeeperPerStore: a second keeper of the same store finds the lock
// taken and returns ErrRunning at once, opening nothing.
func TestOneKeeperPerStore(t *testing.T) {
	p := serve(t, unclosing{memstore.New()})
	opened := false
	err := Serve(context.Background(), Options{Open: func() (ckpt.Store, error) { opened = true; return memstore.New(), nil }, Paths: p, Idle: time.Minute})
	if !errors.Is(err, ErrRunning) || opened {
		t.Fatalf("a second keeper: %v (opened its store: %v)", err, opened)
	}
}

// TestBadRequestsAreRefused: a frame that is not a request is answered
// with an invalid-input error and the connection closed.
func TestBadRequestsAreRefused(t *testing.T) {
	p := serve(t, unclosing{memstore.New()})
	for _, frame := range [][]byte{
		{0, 0, 0, 1, 99},            // unknown op
		{0, 0, 0, 2, 2, 0},          // a field's length cut short
		{0, 0, 0, 5, 6, 0, 0, 0, 9}, // a field past the end
	} {
		conn, err := dialSocket(p.Socket, os.Getuid())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write(frame); err != nil {
			t.Fatal(err)
		}
		b, err := readFrame(conn, maxAnswer)
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeAnswer(b); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("frame %v: %v", frame, err)
		}
	}
}

// FuzzDecodeRequest: any bytes either decode to a request that encodes
// back to a request of the same op, or are refused as invalid; never a
// panic.
func FuzzDecodeRequest(f *testing.F) {
	title := "t"
	e := ckpt.MustEvent(ckpt.EventCreated, time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC), ckpt.Actor{Agent: "a"}, ckpt.Created{Patch: ckpt.Patch{Title: &title}})
	app := func(ifRev, flags int64) []byte {
		f := request(OpAppend).str("kai-7/a")
		_ = f.value(e)
		return f.num(ifRev).num(flags).frame()
	}
	beat := request(OpBeat).str("w")
	_ = beat.value(ckpt.Signal{State: ckpt.PresenceWorking})
	for _, fr := range [][]byte{
		app(3, 1), app(0, appendFlags(ckpt.AppendOptions{KeyOrigin: ckpt.KeyNew})), app(0, 7), beat.frame(),
		request(OpGet).str("w").num(0).frame(), request(OpHistory).str("w").num(1).num(10).frame(),
		request(OpList).bytes([]byte(`{"Prefix":"kai-7/","Limit":5}`)).frame(), request(OpDelete).str("w").frame(),
		request(OpHead).frame(), request(OpWatch).str("c").frame(), request(OpStatus).frame(), request(OpStop).frame(),
		appendCallOptions(request(OpGet).str("w").num(0).frame(), 1, time.Second),
	} {
		f.Add(fr[4:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b)
		if err != nil {
			if !errors.Is(err, ckpt.ErrInvalid) {
				t.Fatalf("%q: %v does not wrap ErrInvalid", b, err)
			}
			return
		}
		if r.Op == 0 || r.Op >= opEnd {
			t.Fatalf("%q decoded to op %d", b, r.Op)
		}
		// The keeper answers what decodes with a frame the client reads.
		s := &server{st: memstore.New(), o: Options{Idle: time.Minute}}
		if r.Op == OpWatch || r.Op == OpStop {
			return
		}
		// (memstore is never unavailable: an unavailable error here is an
		// answer the client could not read.)
		if _, err := decodeAnswer(s.answer(r)[4:]); ckpt.ErrorCode(err) == ckpt.CodeUnavailable {
			t.Fatalf("%q: the answer does not decode: %v", b, err)
		}
	})
}

// TestAppendFlags: an append's flags carry AsCheckpointAgent and the key's
// origin to the keeper as the caller set them, and flags no version of the
// protocol sends are refused, not read as something else.
func TestAppendFlags(t *testing.T) {
	e := ckpt.MustEvent(ckpt.EventNote, time.Date(2026, 1, 15, 14, 30, 0, 0, time.UTC), ckpt.Actor{Agent: "a"}, ckpt.Note{Text: "n"})
	frame := func(flags int64) []byte {
		f := request(OpAppend).str("w")
		if err := f.value(e); err != nil {
			t.Fatal(err)
		}
		return f.num(0).num(flags).frame()[4:]
	}
	for _, agent := range []bool{false, true} {
		for _, origin := range []ckpt.KeyOrigin{ckpt.KeyGiven, ckpt.KeyNew, ckpt.KeyResent} {
			r, err := DecodeRequest(frame(appendFlags(ckpt.AppendOptions{AsCheckpointAgent: agent, KeyOrigin: origin})))
			if err != nil || r.AsAgent != agent || r.KeyOrigin != origin {
				t.Errorf("agent %v, origin %d: decoded %v, %d, %v", agent, origin, r.AsAgent, r.KeyOrigin, err)
			}
		}
	}
	for _, flags := range []int64{-1, 6, 8, 1 << 40} {
		if _, err := DecodeRequest(frame(flags)); !errors.Is(err, ckpt.ErrInvalid) {
			t.Errorf("flags %d: %v, want ErrInvalid", flags, err)
		}
	}
}
