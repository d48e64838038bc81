// Package demo is the script of `ckpt demo`: a short session of agents
// working in parallel in a temporary store, played with a simulated clock.
// The script says which ckpt command lines each agent runs and explains
// what they show; a Runner given by the caller runs each line, so the
// output is exactly what a user of the same commands would see.
package demo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// EnvAgent and EnvID are the variables a command line of the script is
// run with: the acting agent and, for hooks, the checkpoint.
const (
	EnvAgent = "CKPT_AGENT"
	EnvID    = "CKPT_ID"
)

// Command is one command line of the script.
type Command struct {
	Args  []string          // the words after ckpt
	Stdin string            // what the command reads on its standard input
	Env   map[string]string // its environment: nothing else is set
	Dir   string            // its working directory (the temporary one)
	Now   time.Time         // the simulated time it runs at
	Store ckpt.Store        // the demo's store, which it must use
	Out   io.Writer         // where its stdout and stderr go, interleaved
}

// Runner runs one command line and returns its exit status.
type Runner func(ctx context.Context, c Command) int

// Options are the inputs of Play.
type Options struct {
	Out io.Writer // where the session is printed, stage by stage
	// Start is the simulated clock's first reading; the demo moves it
	// forward itself and never waits for real time to pass.
	Start time.Time
	// TempDir is where the temporary store is made and removed; "" is the
	// system's temporary directory.
	TempDir string
	// OpenStore makes the demo's store in the empty directory dir; the
	// store reads the time from now, the simulated clock.
	OpenStore func(dir string, now func() time.Time) (ckpt.Store, error)
	Run       Runner
	// ExitStale and ExitStaleWarn are the exit statuses of `ckpt stale`
	// when a checkpoint is stale, or only warn.
	ExitStale, ExitStaleWarn int
	// Filter is applied to every stage's text before it is written (a
	// terminal sanitizer); nil writes it as is.
	Filter func(string) string
}

// Play plays the demo in a new temporary directory, which it removes
// afterwards. It fails when a command of the script exits otherwise than
// the script expects (the failing command's output is in the error), when
// writing to Out fails, or when ctx ends (checked between stages).
func Play(ctx context.Context, o Options) (err error) {
	base := o.TempDir
	if base == "" {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "ckpt-demo-")
	if err != nil {
		return fmt.Errorf("making the demo's temporary directory: %w", err)
	}
	defer func() {
		if rerr := os.RemoveAll(dir); rerr != nil && err == nil {
			err = fmt.Errorf("removing the demo's temporary store %s: %w", dir, rerr)
		}
	}()
	d := &player{ctx: ctx, out: &bytes.Buffer{}, o: o, dir: dir, now: o.Start.UTC()}
	st, err := o.OpenStore(dir, func() time.Time { return d.now })
	if err != nil {
		return err
	}
	defer st.Close()
	d.store = st
	return d.play()
}

// player plays commands against one store with a simulated clock.
type player struct {
	ctx   context.Context
	out   *bytes.Buffer // everything printed, written to the user at the end of each stage
	o     Options
	store ckpt.Store
	dir   string // the working directory of the demo's commands
	now   time.Time
	stage int
	// clockDue is set when the clock moved (or a stage began) since it was
	// last shown; the next command or paragraph shows it first.
	clockDue bool
	// err is the first command that exited otherwise than the script
	// expects; flush reports it.
	err error
	// stdin and vars are the next command's input and extra environment
	// (runIn).
	stdin string
	vars  map[string]string
}

// stages is how many stages the demo has (the headings count them).
const stages = 7

// runIn is run with stdin and extra environment variables.
func (d *player) runIn(stdin string, vars map[string]string, agent string, args ...string) {
	d.stdin, d.vars = stdin, vars
	defer func() { d.stdin, d.vars = "", nil }()
	d.run(agent, args...)
}

// heading starts the next stage.
func (d *player) heading(title string) {
	d.stage++
	d.out.WriteString("\n")
	head := fmt.Sprintf("== %d/%d  %s ", d.stage, stages, title)
	d.out.WriteString(head + strings.Repeat("=", max(3, 78-len([]rune(head)))) + "\n")
	d.clockDue = true
}

// say prints a paragraph of explanation.
func (d *player) say(text string) {
	d.showClock()
	d.out.WriteString("\n" + text + "\n")
}

// advance moves the simulated clock forward.
func (d *player) advance(by time.Duration) {
	d.now = d.now.Add(by)
	d.clockDue = true
}

// showClock prints the simulated time if it moved since it was last shown.
func (d *player) showClock() {
	if !d.clockDue {
		return
	}
	d.clockDue = false
	elapsed := "the start"
	if e := d.now.Sub(d.o.Start.UTC()); e > 0 {
		elapsed = hoursMinutes(e) + " after the start"
	}
	fmt.Fprintf(d.out, "\n[%s UTC, %s]\n", d.now.Format("15:04"), elapsed)
}

// hoursMinutes prints d as 45s, 12m or 1h5m.
func hoursMinutes(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d%time.Hour < time.Minute:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// run runs `ckpt args…` as agent (no agent: the user) at the simulated time
// and prints the command, its output and a non-zero exit status. The
// command must succeed.
func (d *player) run(agent string, args ...string) { d.runExit(0, agent, args...) }

// runExit is run for a command that must exit with code want.
func (d *player) runExit(want int, agent string, args ...string) {
	prompt := "$"
	if agent != "" {
		prompt = agent + " $"
	}
	d.showClock()
	input := ""
	if d.stdin != "" {
		input = " <<< '" + d.stdin + "'"
	}
	fmt.Fprintf(d.out, "%s ckpt %s%s\n", prompt, render.ShellArgs(args), input)
	env := map[string]string{}
	if agent != "" {
		env[EnvAgent] = agent
	}
	for k, v := range d.vars {
		env[k] = v
	}
	var buf bytes.Buffer
	code := d.o.Run(d.ctx, Command{Args: args, Stdin: d.stdin, Env: env, Dir: d.dir, Now: d.now, Store: d.store, Out: &buf})
	d.out.Write(buf.Bytes())
	if code != 0 {
		fmt.Fprintf(d.out, "(exit status %d)\n", code)
	}
	if code != want && d.err == nil {
		d.err = fmt.Errorf("the demo's `ckpt %s` exited with %d, not %d: %s", render.ShellArgs(args), code, want, strings.TrimSpace(buf.String()))
	}
}

// flush writes what the stage printed to the user.
func (d *player) flush() error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	text := d.out.String()
	if d.o.Filter != nil {
		text = d.o.Filter(text)
	}
	_, err := io.WriteString(d.o.Out, text)
	d.out.Reset()
	if d.err != nil {
		return d.err
	}
	return err
}
