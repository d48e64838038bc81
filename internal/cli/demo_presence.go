package cli

import (
	"os/exec"
	"strconv"
	"time"
)

// presenceStage plays the last stage of `ckpt demo`: three more agents
// whose presence ckpt tells apart. erin's Claude Code session waits for a
// person to allow a command, frank's is busy in a long test run (quiet,
// but not "warn"), and gina's process is killed: ckpt sees it dead at the
// next look, not after four intervals. The hooks run as Claude Code runs
// them, with its payloads on stdin.
func (d *demo) presenceStage() {
	d.heading("Who is working, waiting, busy or dead")
	d.say(`erin and frank run Claude Code with ckpt's hooks installed (ckpt hooks
install claude); the client runs "ckpt hook EVENT" with the event's JSON.
Each hook beats with the presence it means: no history, no fsync.`)
	hook := func(who, id, event, payload string) {
		d.runIn(payload, map[string]string{"CKPT_ID": id, EnvAgent: who}, who+"'s client", "hook", event)
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
