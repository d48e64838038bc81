package agenttest

import (
	"runtime"
	"testing"
	"time"
)

// WaitForText finds words the client drew with cursor moves and colours
// between them, and only after the mark.
func TestWaitForTextReadsThroughEscapes(t *testing.T) {
	tui := &TUI{s: &Session{T: t}}
	tui.screen.WriteString("\x1b[2J\x1b]0;claude\x07Do you want to proceed?")
	mark := tui.Mark()
	tui.screen.WriteString("\x1b[1mDo\x1b[1Cyou\x1b[1Cwant\x1b(B\x1b[39m\x1b[1Cto\x1b[1Cproceed?\x1b[?25l")
	tui.WaitForText(mark, "Do you want to proceed?", time.Second)

	failed := make(chan bool)
	go func() {
		rec := &TUI{s: &Session{T: &fatalRecorder{TB: t}}}
		rec.screen.WriteString("Do you want to proceed?")
		defer func() { failed <- rec.s.T.(*fatalRecorder).failed }()
		rec.WaitForText(rec.Mark(), "Do you want to proceed?", 100*time.Millisecond)
	}()
	if !<-failed {
		t.Error("text drawn before the mark was taken as drawn after it")
	}
}

// fatalRecorder notes a Fatalf and ends its goroutine instead of the test.
type fatalRecorder struct {
	testing.TB
	failed bool
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(string, ...any) {
	r.failed = true
	runtime.Goexit()
}
