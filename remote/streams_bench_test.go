package remote_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/server"
	"github.com/ckpt-dev/ckpt/remote"
)

// BenchmarkWritesWithOpenStreams measures what open change-feed streams
// cost a writer: one client appending durably, one event at a time,
// through ckpt serve over a filestore (in-process server on loopback, the
// token checked on every request), alone and with 200 /v1/changes streams
// open (remote.Store.Watch clients in this process, each reading every
// change). Rounds alternate b.N appends alone and b.N appends watched;
// every stream must have seen the round's last change before the next
// round. It reports the median over rounds of the watched throughput over
// the alone one (x-alone: 1 is free; the goal is at least 0.8), both
// rates, and this process's CPU per write alone and watched (the server
// and the writer; the streams' clients run in the helper process): the
// streams' cost in the server, steadier than rates on a loaded machine.
//
//	go test -run '^$' -bench WritesWithOpenStreams -benchtime 300x ./remote
func BenchmarkWritesWithOpenStreams(b *testing.B) {
	const streams, rounds = 200, 4
	st := newFileStore(b)
	defer st.Close()
	tokens, admin := fleetTokensB(b)
	srv, err := server.New(st, server.Options{Tokens: tokens, Logger: slog.New(slog.DiscardHandler), Keepalive: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := remote.New(hs.URL, remote.Options{Token: admin})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	// Updates of the current step: the state stays one size, so a later
	// round costs what an earlier one did (notes would pile up in it).
	update := func() ckpt.Event {
		step := "a step of a typical length, a line or so " + strconv.Itoa(rand.IntN(1000))
		return ckpt.MustEvent(ckpt.EventUpdate, time.Now(), ckpt.Actor{Agent: "bench"}, ckpt.Patch{CurrentStep: &step})
	}
	write := func() string {
		e := update()
		if _, err := c.Append(ctx, "bench/writer", e, ckpt.AppendOptions{}); err != nil {
			b.Fatal(err)
		}
		h, err := c.Head(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	created := ckpt.MustEvent(ckpt.EventCreated, time.Now(), ckpt.Actor{Agent: "bench"}, ckpt.Created{})
	if _, err := c.Append(ctx, "bench/writer", created, ckpt.AppendOptions{}); err != nil {
		b.Fatal(err)
	}
	run := func() (rate float64, last string) {
		start := time.Now()
		for range b.N {
			e := update()
			if _, err := c.Append(ctx, "bench/writer", e, ckpt.AppendOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		rate = float64(b.N) / time.Since(start).Seconds()
		h, err := c.Head(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return rate, h
	}
	var ratios, alone, watched []float64
	var cpuAlone, cpuWatched time.Duration
	b.ResetTimer()
	for range rounds {
		c0 := processCPU(b)
		r, _ := run()
		cpuAlone += processCPU(b) - c0
		alone = append(alone, r)
		r = openStreamsWhile(b, hs.URL, admin, streams, write, func() (float64, string) {
			c0 := processCPU(b)
			defer func() { cpuWatched += processCPU(b) - c0 }()
			return run()
		})
		watched = append(watched, r)
		ratios = append(ratios, watched[len(watched)-1]/alone[len(alone)-1])
	}
	b.StopTimer()
	b.ReportMetric(median(ratios), "x-alone")
	b.ReportMetric(median(alone), "writes/s-alone")
	b.ReportMetric(median(watched), "writes/s-200-streams")
	n := float64(rounds * b.N)
	b.ReportMetric(float64(cpuAlone.Microseconds())/n, "cpu-us/write-alone")
	b.ReportMetric(float64(cpuWatched.Microseconds())/n, "cpu-us/write-200-streams")
}

// openStreamsWhile starts the streams in a helper process (this test
// binary at nice 19: the streams stand for clients on other machines, and
// take what CPU the server and the writer leave), waits until each has
// seen a change written after it opened, runs the round, and waits (30 s
// at most) until every stream has seen the round's last change.
func openStreamsWhile(b *testing.B, url, token string, n int, write func() string, round func() (float64, string)) float64 {
	args := []string{os.Args[0], "-test.run=^TestStreamsBenchHelper$"}
	if nice, err := exec.LookPath("nice"); err == nil {
		args = append([]string{nice, "-n", "19"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "CKPT_BENCH_STREAMS_URL="+url, "CKPT_BENCH_STREAMS_TOKEN="+token, "CKPT_BENCH_STREAMS="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var at atomic.Pointer[string] // the change every stream has seen
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			l := sc.Text()
			at.Store(&l)
		}
	}()
	reached := func(cursor string) bool { p := at.Load(); return p != nil && *p == cursor }
	deadline := time.Now().Add(60 * time.Second)
	for cur := write(); ; cur = write() {
		time.Sleep(200 * time.Millisecond)
		if reached(cur) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the streams did not open within 60 s")
		}
	}
	rate, last := round()
	for deadline = time.Now().Add(30 * time.Second); !reached(last); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("the streams did not all see change %s within 30 s", last)
		}
	}
	return rate
}

// TestStreamsBenchHelper is BenchmarkWritesWithOpenStreams's stream
// process: it follows CKPT_BENCH_STREAMS streams of the server at
// CKPT_BENCH_STREAMS_URL from its current end, and prints the cursor of a
// change each time every stream has seen it. Without the variables it
// does nothing.
func TestStreamsBenchHelper(t *testing.T) {
	url := os.Getenv("CKPT_BENCH_STREAMS_URL")
	if url == "" {
		t.Skip("the streams of BenchmarkWritesWithOpenStreams")
	}
	n, _ := strconv.Atoi(os.Getenv("CKPT_BENCH_STREAMS"))
	c, err := remote.New(url, remote.Options{Token: os.Getenv("CKPT_BENCH_STREAMS_TOKEN")})
	if err != nil {
		t.Fatal(err)
	}
	seen := make([]atomic.Pointer[string], n)
	for i := range n {
		go func() {
			_ = c.Watch(context.Background(), ckpt.CursorNow, func(ch ckpt.Change) error {
				cur := ch.Cursor
				seen[i].Store(&cur)
				return nil
			})
		}()
	}
	last := ""
	for {
		time.Sleep(10 * time.Millisecond)
		first := seen[0].Load()
		all := first != nil && *first != last
		for i := 1; all && i < n; i++ {
			p := seen[i].Load()
			all = p != nil && *p == *first
		}
		if all {
			last = *first
			fmt.Println(last)
		}
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
