package plan

import (
	"os"
	"path/filepath"
	"testing"
	"time"
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
