package cli

import (
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/process"
)

// presenceOf is c's presence at now (ckpt.PresenceOf), with the agent's
// process checked on this host.
func presenceOf(c *ckpt.Checkpoint, now time.Time, th ckpt.Thresholds) ckpt.PresenceView {
	s := c.Summary()
	return ckpt.PresenceOf(&s, now, th, process.Alive)
}

// presenceText is the presence as `ckpt show` prints it: "busy since
// 14:31:05 (12m ago): Bash: go test ./...", "dead: process 4242 on h1 is
// gone"; "" for a checkpoint that is not live.
func presenceText(c *ckpt.Checkpoint, now time.Time) string {
	v := presenceOf(c, now, ckpt.Thresholds{})
	if v.State == ckpt.PresenceNone {
		return ""
	}
	t := string(v.State)
	if !v.Since.IsZero() {
		t += " since " + v.Since.Format(timeLayout) + " (" + ago(v.Since, now) + ")"
	}
	if v.Why != "" {
		t += ": " + v.Why
	}
	return t
}
