package ckpt_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// workingState is a checkpoint as an agent's session leaves it part way:
// a plan of eight steps, half done, acceptance criteria, decisions, a
// cleared blocker and error, files, next steps, meta, code and presence.
func workingState() *ckpt.Checkpoint {
	c := richCheckpoint()
	at := c.StartedAt
	c.Steps, c.Acceptance, c.Decisions = nil, nil, nil
	for i := range 8 {
		st := ckpt.Step{ID: fmt.Sprintf("step-%d", i), Title: "a step of the plan", Status: ckpt.StepPending}
		if i < 4 {
			st.Status, st.StartedAt, st.CompletedAt, st.Output = ckpt.StepDone, ptr(at), ptr(at), "NOTES.md"
		}
		if i > 0 {
			st.DependsOn = []string{fmt.Sprintf("step-%d", i-1)}
		}
		c.Steps = append(c.Steps, st)
	}
	for i := range 3 {
		c.Acceptance = append(c.Acceptance, ckpt.Criterion{ID: fmt.Sprintf("ac%d", i), Title: "it works", Met: i == 0, VerifiedAt: ptr(at)})
		c.Decisions = append(c.Decisions, ckpt.Decision{At: at, Text: "use the v2 API", Reason: "v1 is rate limited"})
	}
	for i := range 12 {
		c.Files.Modified = append(c.Files.Modified, fmt.Sprintf("internal/pkg/file%d.go", i))
	}
	c.Resume.NextSteps = []string{"write the tests", "run them", "land"}
	c.Meta["source"] = json.RawMessage(`"import"`)
	c.Code = &ckpt.CodeState{Root: "/src/app", Branch: "main", Head: "0123456789abcdef", At: at}
	c.Heartbeat.Presence = &ckpt.Presence{State: ckpt.PresenceWorking, At: at, Process: &ckpt.Process{Host: "h", PID: 42}}
	c.Messages = []ckpt.Message{{ID: "m3", From: "lead", At: at, Text: "please also update the docs"}}
	c.CompletedAt = nil
	return c
}

// BenchmarkClone copies a working state three ways: the generated Clone,
// the reflective walk it replaced, and the floor, a shallow copy (one
// allocation and the struct's bytes, sharing everything). Each has its
// own sub-benchmark (ns, bytes and allocations per copy; one way alone,
// for instruction counts under callgrind); "interleaved" runs the three
// in turn, in blocks, so that a loaded machine weighs on all alike, and
// reports the ratios generated/reflective and generated/floor:
//
//	go test -run '^$' -bench Clone .
func BenchmarkClone(b *testing.B) {
	c := workingState()
	var sink *ckpt.Checkpoint
	ways := []struct {
		name string
		copy func() *ckpt.Checkpoint
	}{
		{"generated", c.Clone},
		{"reflective", func() *ckpt.Checkpoint { return reflectClone(c) }},
		{"floor", func() *ckpt.Checkpoint { out := new(ckpt.Checkpoint); *out = *c; return out }},
	}
	for _, way := range ways {
		b.Run(way.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = way.copy()
			}
		})
	}
	b.Run("interleaved", func(b *testing.B) {
		const block = 50
		spent := make([]time.Duration, len(ways))
		for b.Loop() {
			for w, way := range ways {
				t0 := time.Now()
				for range block {
					sink = way.copy()
				}
				spent[w] += time.Since(t0)
			}
		}
		b.ReportMetric(float64(spent[0])/float64(spent[1]), "generated/reflective")
		b.ReportMetric(float64(spent[0])/float64(spent[2]), "generated/floor")
	})
	_ = sink
}
