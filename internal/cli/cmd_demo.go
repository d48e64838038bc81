package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/filestore"
	"github.com/ckpt-dev/ckpt/render"
)

// DemoOptions are the inputs of `ckpt demo`.
type DemoOptions struct {
	IO IOStreams
	// Start is the simulated clock's first reading; the demo moves it
	// forward itself and never waits for real time to pass.
	Start time.Time
	// TempDir is where the temporary store is made and removed; "" is the
	// system's temporary directory.
	TempDir string
}

func newDemoCmd(f *factory) *cobra.Command {
	o := &DemoOptions{IO: f.env.IOStreams}
	return &cobra.Command{
		Use:   "demo",
		Short: "Play a short session of three agents, a silent one and a takeover",
		Long: `Play, in a temporary store that is removed afterwards, a short session of three
agents working in parallel: steps and progress, a decision, a blocker, one
agent going silent, the stale warning and then the stale verdict, a takeover,
and the continuation prompt the new agent receives. A last stage shows
presence: an agent waiting for a person, one busy in a long tool and one whose
process is killed and seen dead at once. Each stage prints the commands the
agents run and what they see, the status table included.

Time is simulated: half an hour of work plays in about a second. Nothing
outside the temporary store is touched.`,
		Example: `  go run ./cmd/ckpt demo
  ckpt demo | less`,
		Args: exactArgs(0, "no arguments"),
		RunE: f.runE(func(ctx context.Context, args []string) error {
			o.Start = f.now().Truncate(time.Minute)
			return runDemo(ctx, o)
		}),
	}
}

// demo plays commands against one store with a simulated clock.
type demo struct {
	ctx   context.Context
	out   *bytes.Buffer // everything printed, written to the user at the end of each stage
	o     *DemoOptions
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

// demoStages is how many stages the demo has (the headings count them).
const demoStages = 7

func runDemo(ctx context.Context, o *DemoOptions) (err error) {
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
	st, err := filestore.Init(filepath.Join(dir, filestore.StoreDirName), filestore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	d := &demo{ctx: ctx, out: &bytes.Buffer{}, o: o, store: st, dir: dir, now: o.Start.UTC()}
	st.SetClock(func() time.Time { return d.now }) // the demo plays hours in a second

	return d.play()
}

// play runs the script. Each stage ends by flushing what it printed, so a
// user sees the session unfold stage by stage.
func (d *demo) play() error {
	d.out.WriteString(`ckpt demo: three agents (alice, bob, carol) work in parallel in a temporary
store. Lines starting with "NAME $" are commands that agent runs (with
CKPT_AGENT=NAME); the rest is what ckpt prints. The clock is simulated:
every checkpoint promises a heartbeat every 5 minutes, so an agent silent for
10 minutes is "warn" and for 20 minutes "stale".
`)

	d.heading("Three agents start in parallel")
	d.run("alice", "start", "demo/api", "--title", "Build the orders API", "--task", "ORD-1", "--interval", "5m",
		"--step", "schema=Design the schema", "--step", "handlers=Write the handlers", "--step", "tests=Integration tests")
	d.run("bob", "start", "demo/ui", "--title", "Orders page", "--task", "ORD-2", "--interval", "5m",
		"--step", "mock=Clickable mock", "--step", "page=Orders page", "--step", "e2e=End-to-end test")
	d.run("carol", "start", "demo/docs", "--title", "Orders API guide", "--task", "ORD-3", "--interval", "5m",
		"--step", "outline=Outline the guide", "--step", "examples=Pagination examples", "--step", "publish=Publish",
		"--accept", "reviewed=Reviewed by alice")
	if err := d.flush(); err != nil {
		return err
	}

	d.heading("Progress, a decision and a blocker")
	d.advance(3 * time.Minute)
	d.run("alice", "step", "demo/api", "schema", "--start")
	d.run("carol", "step", "demo/docs", "outline", "--start")
	d.advance(3 * time.Minute)
	d.run("alice", "decision", "demo/api", "Cursor pagination, not offsets", "--reason", "the orders table grows fast")
	d.run("alice", "step", "demo/api", "schema", "--done", "--output", "api/schema.sql")
	d.run("bob", "block", "demo/ui", "Needs the orders API schema from demo/api")
	d.advance(time.Minute)
	d.run("carol", "step", "demo/docs", "outline", "--done", "--output", "docs/orders.md")
	d.run("carol", "step", "demo/docs", "examples", "--start")
	d.run("carol", "update", "demo/docs", "--file-modified", "docs/orders.md",
		"--instructions", "Examples go in the Pagination section of docs/orders.md; use the cursor API of demo/api",
		"--next-step", "Write the cursor pagination example", "--next-step", "Ask alice for a review")
	d.advance(time.Minute)
	d.run("", "status")
	if err := d.flush(); err != nil {
		return err
	}

	d.heading("carol goes silent")
	d.say("carol's session dies here: no more updates, no more heartbeats. The others go on.")
	d.advance(4 * time.Minute)
	d.run("alice", "step", "demo/api", "handlers", "--start")
	d.run("bob", "unblock", "demo/ui")
	d.run("bob", "step", "demo/ui", "mock", "--start")
	d.advance(7 * time.Minute)
	d.run("alice", "beat", "demo/api")
	d.run("bob", "beat", "demo/ui")
	d.say("carol has been silent for over 10 minutes (2x her interval): a warning, exit code 11.")
	d.runExit(ExitStaleWarn, "", "stale")
	if err := d.flush(); err != nil {
		return err
	}

	d.heading("The stale verdict")
	d.advance(6 * time.Minute)
	d.run("alice", "step", "demo/api", "handlers", "--done")
	d.run("bob", "step", "demo/ui", "mock", "--done")
	d.advance(4 * time.Minute)
	d.run("alice", "beat", "demo/api")
	d.run("bob", "beat", "demo/ui")
	d.say("Over 20 minutes (4x her interval): carol is stale, exit code 10.\nA script, or ckpt monitor, acts on this.")
	d.runExit(ExitStale, "", "stale")
	d.run("", "status")
	if err := d.flush(); err != nil {
		return err
	}

	d.heading("dave takes over carol's work")
	d.say(`The orchestrator hands demo/docs to a new agent, dave. carol's state is
archived under a name that says why and when; the history of demo/docs keeps
everything. dave receives the continuation prompt:`)
	d.run("orchestrator", "takeover", "demo/docs", "--agent", "dave")
	if err := d.flush(); err != nil {
		return err
	}

	d.heading("dave carries on from where carol stopped")
	d.advance(2 * time.Minute)
	d.run("dave", "step", "demo/docs", "examples", "--done", "--output", "docs/orders.md")
	d.run("", "status", "--all")
	d.say(`Done steps were never offered again: dave started at "Pagination examples".`)
	if err := d.flush(); err != nil {
		return err
	}

	d.presenceStage()
	d.say(`The demo's store is removed now. To use ckpt in a project:

  ckpt init
  ckpt start my-task --step plan --step build --step verify
  ckpt resume my-task      # in a new session, after a crash or a compaction

ckpt help lists every command; docs/cli.md is the reference.`)
	return d.flush()
}

// runIn is run with stdin and extra environment variables.
func (d *demo) runIn(stdin string, vars map[string]string, agent string, args ...string) {
	d.stdin, d.vars = stdin, vars
	defer func() { d.stdin, d.vars = "", nil }()
	d.run(agent, args...)
}

// heading starts the next stage.
func (d *demo) heading(title string) {
	d.stage++
	d.out.WriteString("\n")
	head := fmt.Sprintf("== %d/%d  %s ", d.stage, demoStages, title)
	d.out.WriteString(head + strings.Repeat("=", max(3, 78-len([]rune(head)))) + "\n")
	d.clockDue = true
}

// say prints a paragraph of explanation.
func (d *demo) say(text string) {
	d.showClock()
	d.out.WriteString("\n" + text + "\n")
}

// advance moves the simulated clock forward.
func (d *demo) advance(by time.Duration) {
	d.now = d.now.Add(by)
	d.clockDue = true
}

// showClock prints the simulated time if it moved since it was last shown.
func (d *demo) showClock() {
	if !d.clockDue {
		return
	}
	d.clockDue = false
	elapsed := "the start"
	if e := d.now.Sub(d.o.Start.UTC()); e > 0 {
		elapsed = shortDuration(e) + " after the start"
	}
	fmt.Fprintf(d.out, "\n[%s UTC, %s]\n", d.now.Format("15:04"), elapsed)
}

// run runs `ckpt args…` as agent (no agent: the user) at the simulated time
// and prints the command, its output and a non-zero exit status. The
// command must succeed.
func (d *demo) run(agent string, args ...string) { d.runExit(0, agent, args...) }

// runExit is run for a command that must exit with code want.
func (d *demo) runExit(want int, agent string, args ...string) {
	prompt := "$"
	if agent != "" {
		prompt = agent + " $"
	}
	d.showClock()
	input := ""
	if d.stdin != "" {
		input = " <<< '" + d.stdin + "'"
	}
	fmt.Fprintf(d.out, "%s ckpt %s%s\n", prompt, quoteArgs(args), input)
	var buf bytes.Buffer
	vars := d.vars
	env := &Env{
		IOStreams: IOStreams{In: strings.NewReader(d.stdin), Out: &buf, ErrOut: &buf},
		Getenv: func(k string) string {
			if v, ok := vars[k]; ok {
				return v
			}
			if k == EnvAgent {
				return agent
			}
			return ""
		},
		WorkDir: d.dir,
		Now:     func() time.Time { return d.now },
		Args:    args,
	}
	code := run(&factory{env: env, store: d.store})
	d.out.Write(buf.Bytes())
	if code != 0 {
		fmt.Fprintf(d.out, "(exit status %d)\n", code)
	}
	if code != want && d.err == nil {
		d.err = fmt.Errorf("the demo's `ckpt %s` exited with %d, not %d: %s", quoteArgs(args), code, want, strings.TrimSpace(buf.String()))
	}
}

// flush writes what the stage printed to the user.
func (d *demo) flush() error {
	if err := d.ctx.Err(); err != nil {
		return err
	}
	_, err := io.WriteString(d.o.IO.Out, render.Terminal(d.out.String()))
	d.out.Reset()
	if d.err != nil {
		return d.err
	}
	return err
}

// quoteArgs renders args as a shell would need them typed.
func quoteArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
