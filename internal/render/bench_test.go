package render

import (
	"io"
	"testing"

	ckpt "github.com/ckpt-dev/ckpt"
)

// BenchmarkPrompt renders the continuation prompt of a checkpoint folded
// from 10,000 events with 500 steps and 2,000 decisions, as ckpt resume does.
func BenchmarkPrompt(b *testing.B) {
	c := hugeCheckpoint(b)
	b.ReportAllocs()
	for b.Loop() {
		if md := NewPrompt(c).Markdown(); len(md) >= MaxPromptChars {
			b.Fatal("prompt too long")
		}
	}
}

// BenchmarkStatusTable renders the terminal table of 1,000 checkpoints.
func BenchmarkStatusTable(b *testing.B) {
	cs := make([]*ckpt.Checkpoint, 1000)
	for i := range cs {
		cs[i] = t060(b)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := StatusTable(io.Discard, cs, seed003Now, ckpt.Thresholds{}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
