package demo

import (
	"os/exec"
	"strconv"
	"time"
)

// play runs the script. Each stage ends by flushing what it printed, so a
// user sees the session unfold stage by stage.
func (d *player) play() error {
	d.out.WriteString(`ckpt demo: three agents (alice, bob, carol) work in parallel in a temporary
store. Lines starting with "NAME $" are commands that agent runs (with
CKPT_AGENT=NAME); the rest is what ckpt prints. The clock is simulated:
every checkpoint promises a heartbeat every 5 minutes, so an agent silent for
10 minutes is "warn" and for 20 minutes "stale".
`)
	for _, stage := range []func(){d.startStage, d.progressStage, d.silentStage, d.staleStage, d.takeoverStage, d.carryOnStage, d.presenceStage} {
		stage()
		if err := d.flush(); err != nil {
			return err
		}
	}
	d.say(`The demo's store is removed now. To use ckpt in a project:

  ckpt init
  ckpt start my-task --step plan --step build --step verify
  ckpt resume my-task      # in a new session, after a crash or a compaction

ckpt help lists every command; docs/cli.md is the reference.`)
	return d.flush()
}

func (d *player) startStage() {
	d.heading("Three agents start in parallel")
	d.run("alice", "start", "demo/api", "--title", "Build the orders API", "--task", "ORD-1", "--interval", "5m",
		"--step", "schema=Design the schema", "--step", "handlers=Write the handlers", "--step", "tests=Integration tests")
	d.run("bob", "start", "demo/ui", "--title", "Orders page", "--task", "ORD-2", "--interval", "5m",
		"--step", "mock=Clickable mock", "--step", "page=Orders page", "--step", "e2e=End-to-end test")
	d.run("carol", "start", "demo/docs", "--title", "Orders API guide", "--task", "ORD-3", "--interval", "5m",
		"--step", "outline=Outline the guide", "--step", "examples=Pagination examples", "--step", "publish=Publish",
		"--accept", "reviewed=Reviewed by alice")
}

func (d *player) progressStage() {
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
}

func (d *player) silentStage() {
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
	d.runExit(d.o.ExitStaleWarn, "", "stale")
}

func (d *player) staleStage() {
	d.heading("The stale verdict")
	d.advance(6 * time.Minute)
	d.run("alice", "step", "demo/api", "handlers", "--done")
	d.run("bob", "step", "demo/ui", "mock", "--done")
	d.advance(4 * time.Minute)
	d.run("alice", "beat", "demo/api")
	d.run("bob", "beat", "demo/ui")
	d.say("Over 20 minutes (4x her interval): carol is stale, exit code 10.\nA script, or ckpt monitor, acts on this.")
	d.runExit(d.o.ExitStale, "", "stale")
	d.run("", "status")
}

func (d *player) takeoverStage() {
	d.heading("dave takes over carol's work")
	d.say(`The orchestrator hands demo/docs to a new agent, dave. carol's state is
archived under a name that says why and when; the history of demo/docs keeps
everything. dave receives the continuation prompt:`)
	d.run("orchestrator", "takeover", "demo/docs", "--agent", "dave")
}

func (d *player) carryOnStage() {
	d.heading("dave carries on from where carol stopped")
	d.advance(2 * time.Minute)
	d.run("dave", "step", "demo/docs", "examples", "--done", "--output", "docs/orders.md")
	d.run("", "status", "--all")
	d.say(`Done steps were never offered again: dave started at "Pagination examples".`)
}

// presenceStage plays the last stage: three more agents whose presence
// ckpt tells apart. erin's Claude Code session waits for a person to allow
// a command, frank's is busy in a long test run (quiet, but not "warn"),
// and gina's process is killed: ckpt sees it dead at the next look, not
// after four intervals. The hooks run as Claude Code runs them, with its
// payloads on stdin.
func (d *player) presenceStage() {
	d.heading("Who is working, waiting, busy or dead")
	d.say(`erin and frank run Claude Code with ckpt's hooks installed (ckpt hooks
install claude); the client runs "ckpt hook EVENT" with the event's JSON.
Each hook beats with the presence it means: no history, no fsync.`)
	hook := func(who, id, event, payload string) {
		d.runIn(payload, map[string]string{EnvID: id, EnvAgent: who}, who+"'s client", "hook", event)
	}
	hook("erin", "demo/erin", "UserPromptSubmit", `{"session_id":"e1","prompt":"Migrate the orders table"}`)
	hook("frank", "demo/frank", "UserPromptSubmit", `{"session_id":"f1","prompt":"Run the end-to-end suite"}`)
	d.advance(time.Minute)
	hook("erin", "demo/erin", "Notification", `{"session_id":"e1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`)
	hook("frank", "demo/frank", "PreToolUse", `{"session_id":"f1","tool_name":"Bash","tool_input":{"command":"make e2e"}}`)

	sleeper := exec.Command("sleep", "600")
	if sleeper.Start() == nil {
		d.say("gina is a script with no hooks: it reports itself with ckpt beat --pid.")
		d.run("gina", "start", "demo/gina", "--title", "Nightly export", "--interval", "5m")
		d.run("gina", "beat", "demo/gina", "--state", "working", "--pid", strconv.Itoa(sleeper.Process.Pid))
		d.advance(time.Minute)
		sleeper.Process.Kill()
		sleeper.Wait()
		d.say(`gina's process is killed (kill -9). Nobody tells ckpt: it checks the
recorded process (its PID and start time) and sees it gone at once, a minute
after the last beat, not after four intervals.`)
		d.run("", "show", "demo/gina")
	}
	d.advance(35 * time.Minute)
	d.say(`35 minutes later, past the 30-minute warn threshold of erin's and frank's
checkpoints: erin is waiting for a person (her client still runs), frank is
busy in make e2e: quiet, but neither is "warn".`)
	d.run("", "show", "demo/erin")
	d.run("", "show", "demo/frank")
}
