package cli

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/internal/syncbuf"
)

// fakeTerminal is a terminal screen that understands what --watch writes:
// text, newlines, cursor addressing (CSI row;col H), clear to end of line
// (CSI K), clear below (CSI J) and clear screen (CSI 2J). It keeps every
// write, so a test can see what one redraw cost.
type fakeTerminal struct {
	mu       sync.Mutex
	writes   []string
	rows     [][]rune
	row, col int
}

func (t *fakeTerminal) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writes = append(t.writes, string(p))
	s := string(p)
	for len(s) > 0 {
		if strings.HasPrefix(s, "\x1b[") {
			end := strings.IndexAny(s[2:], "HJK")
			if end < 0 {
				panic("unknown escape in " + strconv.Quote(s))
			}
			t.control(s[2:2+end], s[2+end])
			s = s[3+end:]
			continue
		}
		r := []rune(s)[0]
		s = s[len(string(r)):]
		if r == '\n' {
			t.row, t.col = t.row+1, 0
			continue
		}
		for len(t.rows) <= t.row {
			t.rows = append(t.rows, nil)
		}
		line := t.rows[t.row]
		for len(line) <= t.col {
			line = append(line, ' ')
		}
		line[t.col] = r
		t.rows[t.row], t.col = line, t.col+1
	}
	return len(p), nil
}

func (t *fakeTerminal) control(params string, final byte) {
	switch final {
	case 'H':
		t.row, t.col = 0, 0
		if params != "" {
			rc := strings.SplitN(params, ";", 2)
			r, _ := strconv.Atoi(rc[0])
			c, _ := strconv.Atoi(rc[1])
			t.row, t.col = r-1, c-1
		}
	case 'K':
		if t.row < len(t.rows) && t.col < len(t.rows[t.row]) {
			t.rows[t.row] = t.rows[t.row][:t.col]
		}
	case 'J':
		if params == "2" {
			t.rows = nil
			return
		}
		if t.row < len(t.rows) {
			if t.col < len(t.rows[t.row]) {
				t.rows[t.row] = t.rows[t.row][:t.col]
			}
			t.rows = t.rows[:t.row+1]
		}
	}
}

// screen is what the terminal shows, without trailing blank rows.
func (t *fakeTerminal) screen() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var lines []string
	for _, r := range t.rows {
		lines = append(lines, strings.TrimRight(string(r), " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// since is everything written after the first n writes.
func (t *fakeTerminal) since(n int) (string, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.writes[n:], ""), len(t.writes)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// TestStatusWatchFollowsTheFeed: on a terminal, --watch redraws when the
// store's change feed reports a write, with no timer (its ticks never come),
// and rewrites only the rows that changed; when the table shrinks the rows
// below it are cleared; the slow timer redraws presence; Ctrl-C stops it
// cleanly.
func TestStatusWatchFollowsTheFeed(t *testing.T) {
	h := newHarness(t)
	st := h.Store
	h.OK("start", "a", "--agent", "alice", "--interval", "5m")
	h.OK("start", "b", "--agent", "bob", "--interval", "5m")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticks := make(chan time.Time)
	var clockMu sync.Mutex
	clock := t0
	term := &fakeTerminal{}
	o := &StatusViewOptions{
		common: common{
			IO: cmdutil.IOStreams{In: strings.NewReader(""), Out: term, ErrOut: &syncbuf.Buffer{}},
			Now: func() time.Time {
				clockMu.Lock()
				defer clockMu.Unlock()
				return clock
			},
			Store: func() (ckpt.Store, error) { return st, nil },
		},
		Watch: true, Every: 5 * time.Second, Ticks: ticks, Terminal: true,
	}
	done := make(chan error, 1)
	go func() { done <- runStatusView(ctx, o) }()

	// The screen is exactly what ckpt status prints, under the header.
	frame := func() string {
		return "ckpt status  " + o.Now().Format(render.TimeLayout) + ", on each change and every 5s  (Ctrl-C stops)\n\n" +
			strings.TrimSuffix(h.OK("status"), "\n")
	}
	want := frame()
	waitUntil(t, "the first frame", func() bool { return term.screen() == want })
	_, mark := term.since(0)

	// A write: only b's row is rewritten.
	h.OK("fail", "b", "--reason", "upstream API removed")
	want = frame()
	waitUntil(t, "the frame after b failed", func() bool { return term.screen() == want })
	redraw, mark := term.since(mark)
	if strings.Count(redraw, "\x1b[K") != 1 || !strings.Contains(redraw, "failed") ||
		strings.Contains(redraw, "alice") || strings.Contains(redraw, "ckpt status") || strings.Contains(redraw, "\x1b[2J") {
		t.Errorf("a change to one row rewrote more than that row: %q", redraw)
	}

	// Archived, b leaves the table (status without --all): the row below
	// the new last one is cleared.
	h.OK("archive", "b")
	want = frame()
	waitUntil(t, "the frame without b", func() bool { return term.screen() == want })
	redraw, mark = term.since(mark)
	if !strings.Contains(redraw, "\x1b[J") || strings.Contains(redraw, "alice") {
		t.Errorf("shrinking the table: %q", redraw)
	}

	// No write, but time passes: the slow timer re-derives presence.
	clockMu.Lock()
	clock = t0.Add(25 * time.Minute)
	clockMu.Unlock()
	h.Now = t0.Add(25 * time.Minute)
	ticks <- time.Time{}
	want = frame()
	waitUntil(t, "the frame after the tick", func() bool { return term.screen() == want })
	if !strings.Contains(want, "stale") {
		t.Errorf("after 25 silent minutes a is not stale:\n%s", want)
	}
	if redraw, _ := term.since(mark); strings.Contains(redraw, "\x1b[2J") {
		t.Errorf("the tick cleared the screen: %q", redraw)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("interrupted watch: %v", err)
	}
}
