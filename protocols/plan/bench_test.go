package plan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

func benchFixture(b *testing.B, name string) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkParseTemplate(b *testing.B) {
	data := benchFixture(b, "progress-sync.feature-implementation-template.plan.md")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParsePhaseFile(b *testing.B) {
	data := benchFixture(b, "agent-squad.251121-1053-git-ops-optimization.phase-01-quick-wins.md")
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSync is one checkpoint of the template plan with nothing
// changed: parse, read state.json, append nothing, replace state.json
// durably (and recovery.json every fifth time).
func BenchmarkSync(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "plans", "bench")
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, "plan.md")
	os.WriteFile(path, benchFixture(b, "progress-sync.feature-implementation-template.plan.md"), 0o644)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for b.Loop() {
		at = at.Add(time.Second)
		if _, err := Sync(path, at); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSetTask ticks and unticks one box, a durable atomic replace of
// plan.md each time.
func BenchmarkSetTask(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "plan.md")
	os.WriteFile(path, benchFixture(b, "progress-sync.feature-implementation-template.plan.md"), 0o644)
	done := false
	for b.Loop() {
		done = !done
		if err := SetTask(path, "p1-task-1", done); err != nil {
			b.Fatal(err)
		}
	}
}

// largePlan is a plan of n tasks in phases of 1,000, every third checked.
func largePlan(n int) []byte {
	var b strings.Builder
	b.WriteString("# Large plan\n")
	for i := 0; i < n; i++ {
		if i%1000 == 0 {
			fmt.Fprintf(&b, "\n## Phase %d\n<!-- CHECKPOINT: phase-%d -->\n\n", i/1000+1, i/1000+1)
		}
		box := " "
		if i%3 == 0 {
			box = "x"
		}
		fmt.Fprintf(&b, "- [%s] Task number %d <!-- TASK: t%d -->\n", box, i, i)
	}
	return []byte(b.String())
}

// BenchmarkSyncLarge is plan sync of a 10,000-task plan into a store:
// "import" is its first sync, "resync" a sync after one box changed. A
// re-sync must cost no more than the import (issue 9: it was quadratic);
// -benchtime=1x with CKPT_BENCH_TASKS=100000 measures the 100,000-task case.
func BenchmarkSyncLarge(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("CKPT_BENCH_TASKS")); err == nil && v > 0 {
		n = v
	}
	data := largePlan(n)
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	syncOnce := func(b *testing.B, st ckpt.Store, path string) {
		at = at.Add(time.Second)
		res, err := Sync(path, at)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := StoreSync(context.Background(), st, res.ID, res.Checkpoint, StoreOptions{Now: at, Source: path}); err != nil {
			b.Fatal(err)
		}
	}
	fresh := func(b *testing.B) string {
		dir := filepath.Join(b.TempDir(), "plans", "large")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		path := filepath.Join(dir, "plan.md")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		return path
	}
	b.Run("import", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			path := fresh(b)
			b.StartTimer()
			syncOnce(b, memstore.New(), path)
		}
	})
	b.Run("resync", func(b *testing.B) {
		path, st := fresh(b), memstore.New()
		syncOnce(b, st, path)
		done := false
		for b.Loop() {
			b.StopTimer()
			done = !done
			if err := SetTask(path, "t1", done); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			syncOnce(b, st, path)
		}
	})
}
