package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/clitest"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
)

// orchestration sets up seed 003's picture: migration working on T060,
// technical done with every criterion met, content done with one unmet,
// and an archived old run.
func orchestration(h *clitest.Harness) {
	h.T.Helper()
	h.OK("start", "migration-T060", "--agent", "migration", "--task", "T060", "--title", "Convert the PDFs", "--interval", "5m",
		"--step", "post-01", "--step", "post-02", "--step", "post-03", "--step", "post-04")
	h.OK("step", "migration-T060", "post-01", "--done")
	h.OK("step", "migration-T060", "post-02", "--start")
	h.OK("start", "technical-T040", "--agent", "technical", "--task", "T040", "--accept", "build")
	h.OK("accept", "technical-T040", "build")
	h.OK("done", "technical-T040")
	h.OK("start", "content-T050", "--agent", "content", "--task", "T050", "--accept", "links=Links checked", "--accept", "images")
	h.OK("accept", "content-T050", "links")
	h.OK("done", "content-T050")
	h.OK("start", "old-run", "--agent", "migration")
	h.OK("done", "old-run")
	h.OK("archive", "old-run")
}

func TestStatusTableShowsLivenessAndPartialCompletion(t *testing.T) {
	h := newHarness(t)
	orchestration(h)
	h.Now = t0.Add(12 * time.Minute)
	out := h.OK("status")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "PRESENCE") {
		t.Fatalf("status table:\n%s", out)
	}
	row := func(id string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, id+" ") {
				return l
			}
		}
		t.Fatalf("no row for %s:\n%s", id, out)
		return ""
	}
	if r := row("content-T050"); !strings.Contains(r, "done (partial)") || !strings.HasSuffix(r, "done 12m: acceptance criteria not all met") {
		t.Errorf("partially complete row: %q", r)
	}
	if r := row("technical-T040"); strings.Contains(r, "partial") || !strings.Contains(r, "[##########] 100%") {
		t.Errorf("complete row: %q", r)
	}
	if r := row("migration-T060"); !strings.Contains(r, "[##--------]  25%") || !strings.Contains(r, "post-02") || !strings.Contains(r, "12 min ago") || !strings.HasSuffix(r, "warn 2m: silent for more than 10m") {
		t.Errorf("working row: %q", r)
	}
	if strings.Contains(out, "old-run") {
		t.Error("status shows an archived checkpoint without --all")
	}
	if out := h.OK("status", "--all"); !strings.Contains(out, "old-run") {
		t.Errorf("status --all:\n%s", out)
	}
}

func TestStatusMarkdownIsSeed003StatusMD(t *testing.T) {
	h := newHarness(t)
	orchestration(h)
	h.Now = t0.Add(2 * time.Minute)
	out := h.OK("status", "--md")
	for _, want := range []string{
		"# Orchestration Status\n\n**Last Updated**: 2026-01-15T14:32:00Z\n**Overall Progress**: 75% (2/3 tasks complete)\n",
		"| Agent | Task | Progress | Last Update | Status |\n|-------|------|----------|-------------|--------|\n",
		"| content | T050 | 100% | 2 min ago | complete (partial) |\n",
		"| migration | T060 | 25% | 2 min ago | in_progress |\n",
		"| technical | T040 | 100% | 2 min ago | complete |\n",
		"## Partially Complete\n\n- content T050: unmet images\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("STATUS.md lacks %q:\n%s", want, out)
		}
	}

	// --out writes the same bytes to the file atomically and nothing to stdout.
	dir := t.TempDir()
	file := filepath.Join(dir, "progress", "STATUS.md")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := h.OK("status", "--md", "--out", file); got != "" {
		t.Errorf("--out printed %q", got)
	}
	b, err := os.ReadFile(file)
	if err != nil || string(b) != out {
		t.Errorf("STATUS.md file differs from stdout: %v\n%s", err, b)
	}
	if entries, _ := os.ReadDir(filepath.Dir(file)); len(entries) != 1 {
		t.Errorf("--out left %d files behind", len(entries))
	}
	msg := h.Fails(ExitFailure, "status", "--md", "--out", filepath.Join(dir, "missing", "STATUS.md"))
	if !strings.Contains(msg, "writing "+filepath.Join(dir, "missing", "STATUS.md")) {
		t.Errorf("--out into a missing directory: %q", msg)
	}
}

func TestStatusJSONRows(t *testing.T) {
	h := newHarness(t)
	orchestration(h)
	h.Now = t0.Add(25 * time.Minute)
	var rows []render.StatusRow
	if err := json.Unmarshal([]byte(h.OK("status", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	byID := map[string]render.StatusRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	if len(rows) != 3 || rows[0].ID != "content-T050" {
		t.Fatalf("rows %+v", rows)
	}
	if r := byID["content-T050"]; !r.PartiallyComplete || r.Liveness != ckpt.NotLive || r.Agent != "content" {
		t.Errorf("content row %+v", r)
	}
	if r := byID["migration-T060"]; r.Liveness != ckpt.Stale || r.SilentSeconds != 25*60 || r.Progress.Done != 1 || r.CurrentStep != "post-02" || r.TaskID != "T060" {
		t.Errorf("migration row %+v", r)
	}
	h.Fails(ExitUsage, "status", "--md", "--json")
	h.Fails(ExitUsage, "status", "--every", "1s")
	if out := h.OK("status", "--json", "--prefix", "nothing"); strings.TrimSpace(out) != "[]" {
		t.Errorf("empty status --json: %q", out)
	}
}

func TestStatusWatchRedrawsUntilInterrupted(t *testing.T) {
	h := newHarness(t)
	st := h.Store
	h.OK("start", "a", "--agent", "alice")
	ctx, cancel := context.WithCancel(context.Background())
	var errOut syncbuf.Buffer
	o := &StatusViewOptions{
		common: common{
			IO:    cmdutil.IOStreams{In: strings.NewReader(""), Out: &syncbuf.Buffer{}, ErrOut: &errOut},
			Now:   func() time.Time { return t0 },
			Store: func() (ckpt.Store, error) { return st, nil },
		},
		Watch: true, Every: time.Second,
	}
	done := make(chan error, 1)

	// Not on a terminal: frames follow each other, with no escape codes;
	// with --out each frame rewrites the file.
	// Ctrl-C (the context ending) stops it cleanly.
	file := filepath.Join(t.TempDir(), "STATUS.md")
	var plain syncbuf.Buffer
	o2 := *o
	o2.IO = cmdutil.IOStreams{In: strings.NewReader(""), Out: &plain, ErrOut: &errOut}
	o2.Terminal, o2.Markdown, o2.OutFile = false, true, file
	o2.Ticks = make(chan time.Time)
	go func() { done <- runStatusView(ctx, &o2) }()
	for deadline := time.Now().Add(time.Minute); !strings.Contains(errOut.String(), "ckpt: wrote"); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("watch --out wrote nothing in a minute")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("interrupted watch: %v", err)
	}
	if plain.String() != "" || !strings.Contains(errOut.String(), "ckpt: wrote "+file) {
		t.Errorf("watch --out: stdout %q, stderr %q", plain.String(), errOut.String())
	}
	if b, err := os.ReadFile(file); err != nil || !strings.HasPrefix(string(b), "# Orchestration Status") {
		t.Errorf("watched STATUS.md: %v %q", err, b)
	}
}

func TestProgressMarkdownHasSeed001Sections(t *testing.T) {
	h := newHarness(t)
	h.OK("start", "loop/T060", "--task", "T060", "--title", "Convert the PDFs", "--step", "post-01", "--step", "post-02", "--step", "post-03", "--meta", "execution_mode=tdd")
	h.OK("step", "loop/T060", "post-01", "--done")
	h.OK("step", "loop/T060", "post-02", "--start")
	h.OK("decision", "loop/T060", "Keep the PDF page numbers", "--reason", "citations use them")
	h.OK("block", "loop/T060", "post-03.pdf is missing")
	out := h.OK("progress", "loop/T060")
	want := "# Session Progress\n\n**Issue:** T060 — Convert the PDFs\n**Session:** 2026-01-15T14:30:00Z\n**Execution Mode:** exec:tdd\n\n" +
		"## Completed Tasks\n- post-01 ✓\n\n## Current Task\n- post-02 — blocked\n\n## Remaining Tasks\n- post-03\n\n" +
		"## Decisions Made\n- Keep the PDF page numbers: citations use them\n\n## Blockers\n- post-03.pdf is missing\n\n## Continuation Prompt\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("progress markdown:\n%s\nwant it to start:\n%s", out, want)
	}
	if old := h.OK("progress", "loop/T060", "--rev", "1"); !strings.Contains(old, "## Completed Tasks\n- None\n") {
		t.Errorf("progress --rev 1:\n%s", old)
	}
	// --out writes the file as ckpt export does: missing directories made.
	file := filepath.Join(t.TempDir(), "issue", "T060", ".ccc-progress.md")
	if got := h.OK("progress", "loop/T060", "--out", file); got != "" {
		t.Errorf("--out printed %q", got)
	}
	if b, _ := os.ReadFile(file); string(b) != out {
		t.Errorf("--out file differs from stdout")
	}
	h.Fails(ExitNotFound, "progress", "nope")
	h.Fails(ExitNotFound, "progress", "loop/T060", "--rev", "99")
	h.Fails(ExitUsage, "progress", "loop/T060", "--rev", "-2")
}

func TestIsTerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is a terminal")
	}
}

func TestStatusWatchFrameOffATerminal(t *testing.T) {
	var out bytes.Buffer
	o := &StatusViewOptions{
		common: common{IO: cmdutil.IOStreams{Out: &out}, Now: func() time.Time { return t0 }},
		Watch:  true, Every: 5 * time.Second,
	}
	if err := o.emit([]byte("TABLE\n")); err != nil {
		t.Fatal(err)
	}
	if want := "ckpt status  2026-01-15T14:30:00Z, on each change and every 5s  (Ctrl-C stops)\n\nTABLE\n\n"; out.String() != want {
		t.Errorf("frame %q, want %q", out.String(), want)
	}
}
