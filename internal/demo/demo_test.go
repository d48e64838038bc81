package demo

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/memstore"
)

var t0 = time.Date(2026, 1, 15, 14, 0, 0, 0, time.UTC)

// recorder is a Runner that records the command lines and answers each
// with the exit status the script expects of it, unless told otherwise.
type recorder struct {
	lines []Command
	exit  func(c Command) int
}

func (r *recorder) run(_ context.Context, c Command) int {
	r.lines = append(r.lines, c)
	io.WriteString(c.Out, "ran "+strings.Join(c.Args, " ")+"\n")
	if r.exit != nil {
		return r.exit(c)
	}
	if c.Args[0] == "stale" {
		return 10 // the second stale expects 10, the first 11: see below
	}
	return 0
}

func options(t *testing.T, out io.Writer, r *recorder) Options {
	tmp := t.TempDir()
	return Options{
		Out: out, Start: t0, TempDir: tmp, Run: r.run, ExitStale: 10, ExitStaleWarn: 11,
		OpenStore: func(dir string, now func() time.Time) (ckpt.Store, error) {
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				t.Errorf("the store's directory %s does not exist: %v", dir, err)
			}
			return memstore.New(), nil
		},
	}
}

func TestPlayRunsTheScriptAndReportsAnUnexpectedExit(t *testing.T) {
	var out bytes.Buffer
	r := &recorder{}
	o := options(t, &out, r)
	err := Play(context.Background(), o)
	// The first stale must warn (11); the recorder answered 10.
	if err == nil || !strings.Contains(err.Error(), "`ckpt stale` exited with 10, not 11") {
		t.Fatalf("Play = %v, want the unexpected exit of the first stale", err)
	}
	if !strings.Contains(out.String(), "== 3/7  carol goes silent") || strings.Contains(out.String(), "== 4/7") {
		t.Errorf("Play went on past the stage that failed:\n%s", out.String())
	}
	if entries, _ := os.ReadDir(o.TempDir); len(entries) != 0 {
		t.Errorf("a failed demo left %d entries in its temporary directory", len(entries))
	}
}

func TestPlayGivesEachCommandItsAgentTimeAndInput(t *testing.T) {
	var out bytes.Buffer
	stale := 0
	r := &recorder{}
	r.exit = func(c Command) int {
		if c.Args[0] != "stale" {
			return 0
		}
		stale++
		return map[int]int{1: 11, 2: 10}[stale]
	}
	o := options(t, &out, r)
	o.Filter = strings.ToUpper
	if err := Play(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	first, last := r.lines[0], r.lines[len(r.lines)-1]
	if first.Env[EnvAgent] != "alice" || !first.Now.Equal(t0) || first.Args[0] != "start" {
		t.Errorf("first command: %+v", first)
	}
	if _, ok := last.Env[EnvAgent]; ok || last.Args[0] != "show" || !last.Now.After(t0.Add(time.Hour)) {
		t.Errorf("last command: %+v", last)
	}
	var hook *Command
	for i, c := range r.lines {
		if c.Dir == "" || c.Store == nil {
			t.Fatalf("command %d has no directory or store: %+v", i, c)
		}
		if c.Args[0] == "hook" && hook == nil {
			hook = &r.lines[i]
		}
	}
	if hook == nil || hook.Env[EnvID] != "demo/erin" || hook.Env[EnvAgent] != "erin" || !strings.Contains(hook.Stdin, `"session_id":"e1"`) {
		t.Errorf("first hook: %+v", hook)
	}
	s := out.String()
	for _, w := range []string{"ALICE $ CKPT START DEMO/API", "RAN START DEMO/API", "(EXIT STATUS 11)", "== 7/7", "[15:08 UTC, 1H8M AFTER THE START]"} {
		if !strings.Contains(s, w) {
			t.Errorf("the output lacks %q:\n%s", w, s)
		}
	}
}

func TestPlayStopsWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	o := options(t, &out, &recorder{})
	if err := Play(ctx, o); !errors.Is(err, context.Canceled) || out.Len() != 0 {
		t.Errorf("an interrupted demo: %v, printed %d bytes", err, out.Len())
	}
}
