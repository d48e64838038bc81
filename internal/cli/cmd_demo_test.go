package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/internal/cmdutil"
)

func TestDemoPlaysEveryStageAndCleansUp(t *testing.T) {
	tmp := t.TempDir()
	var out bytes.Buffer
	o := &DemoOptions{IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &out}, Start: t0, TempDir: tmp}
	if err := runDemo(context.Background(), o); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	s := out.String()
	wants := []string{
		"== 1/7  Three agents start in parallel",
		"alice $ ckpt start demo/api",
		"== 2/7  Progress, a decision and a blocker",
		"decision: Cursor pagination, not offsets",
		"blocker b1: Needs the orders API schema from demo/api",
		"$ ckpt status\nID ",
		"== 3/7  carol goes silent",
		"demo/docs  carol  in_progress  warn ",
		"(exit status 11)",
		"== 4/7  The stale verdict",
		"demo/docs  carol  in_progress  stale ",
		"(exit status 10)",
		"== 5/7  dave takes over carol's work",
		"orchestrator $ ckpt takeover demo/docs --agent dave\narchived the previous state as demo/docs_crashed_1768489140\n",
		"# Resume: Orders API guide",
		"- **Agent:** dave, session 2",
		"## Done steps (do not redo)\n- [x] outline: Outline the guide",
		"== 6/7  dave carries on from where carol stopped",
		"dave $ ckpt step demo/docs examples --done",
		"demo/docs_crashed_1768489140  carol",
		"== 7/7  Who is working, waiting, busy or dead",
		"erin's client $ ckpt hook Notification <<< '",
		"$ ckpt show demo/gina\n",
		"presence     dead since 2026-01-15T15:02:00Z (1m ago): process ",
		"$ ckpt show demo/erin\n",
		"presence     waiting since 2026-01-15T15:02:00Z (36m ago): permission_prompt: Claude needs your permission to use Bash\n",
		"$ ckpt show demo/frank\n",
		"presence     busy since 2026-01-15T15:02:00Z (36m ago): Bash: make e2e\n",
	}
	at := 0
	for _, w := range wants {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("the demo's output lacks %q after byte %d:\n%s", w, at, s)
		}
		at += i + len(w)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil || len(entries) != 0 {
		t.Errorf("the demo left %d entries in its temporary directory (%v)", len(entries), err)
	}
}

func TestDemoCommandRuns(t *testing.T) {
	h := newHarness(t)
	out := h.OK("demo")
	if !strings.Contains(out, "== 7/7") || !strings.Contains(out, "(exit status 10)") {
		t.Errorf("ckpt demo output:\n%s", out)
	}
	// The demo plays in its own store: the user's is untouched.
	if h.OK("ls", "--all", "--json") != "[]\n" {
		t.Error("the demo wrote to the user's store")
	}
}

func TestDemoStopsWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	tmp := t.TempDir()
	err := runDemo(ctx, &DemoOptions{IO: cmdutil.IOStreams{Out: &out, ErrOut: &out}, Start: t0, TempDir: tmp})
	if err == nil || out.Len() != 0 {
		t.Errorf("an interrupted demo: %v, printed %d bytes", err, out.Len())
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("an interrupted demo left its store behind")
	}
}
