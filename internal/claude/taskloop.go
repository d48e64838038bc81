package claude

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// taskLoop blocks the stop with the next step when the loop is on for cp,
// steps remain, the completion token is absent and the cap is not reached.
func (c *hookCall) taskLoop(cp *ckpt.Checkpoint) {
	loop := loopFor(c.h.Loop, cp)
	if !loop.Enabled {
		return
	}
	var st hookState
	if c.h.StateDir != "" {
		st = loadState(c.h.counterDir(), c.id)
	}
	save := func() {
		if c.h.StateDir != "" {
			if err := saveState(c.h.counterDir(), c.id, st); err != nil {
				c.warn("%s: %v", c.id, err)
			}
		}
	}
	next := nextStep(cp)
	switch {
	case strings.Contains(c.in.LastAssistantMessage, loop.Token), next == nil,
		cp.Status != ckpt.StatusInProgress && cp.Status != ckpt.StatusPending:
		if st.StopBlocks != 0 {
			st.StopBlocks = 0
			save()
		}
		return
	case !c.in.StopHookActive:
		st.StopBlocks = 0
	case c.h.StateDir == "":
		return // cannot count blocks: continue only once per turn
	case st.StopBlocks >= loop.MaxBlocks:
		c.warn("%s: task loop stopped after %d blocks in a row without %s; the agent may stop", c.id, st.StopBlocks, loop.Token)
		st.StopBlocks = 0
		save()
		return
	}
	st.StopBlocks++
	save()
	c.res.Output = BlockStop(fmt.Sprintf("ckpt task loop: checkpoint %s has %d of %d steps done. Next step: %s (id %s). Continue with it now and record each finished step with `ckpt step %s %s --done`. When the whole task is finished, end your reply with %s.",
		c.id, cp.Progress.Done, cp.Progress.Total, next.Label(), next.ID, c.id, next.ID, loop.Token))
}

// loopFor applies a checkpoint's "task_loop" meta key over the default.
func loopFor(def TaskLoop, cp *ckpt.Checkpoint) TaskLoop {
	l := def
	if raw, ok := cp.Meta["task_loop"]; ok {
		var on bool
		var word string
		var obj struct {
			Enabled   *bool  `json:"enabled"`
			Token     string `json:"token"`
			MaxBlocks int    `json:"max_blocks"`
		}
		switch {
		case json.Unmarshal(raw, &on) == nil:
			l.Enabled = on
		case json.Unmarshal(raw, &word) == nil: // `ckpt update --meta task_loop=true` stores a string
			if b, err := strconv.ParseBool(strings.TrimSpace(word)); err == nil {
				l.Enabled = b
			}
		case json.Unmarshal(raw, &obj) == nil:
			l.Enabled = obj.Enabled == nil || *obj.Enabled
			if obj.Token != "" {
				l.Token = obj.Token
			}
			if obj.MaxBlocks > 0 {
				l.MaxBlocks = obj.MaxBlocks
			}
		}
	}
	if l.Token == "" {
		l.Token = DefaultCompletionToken
	}
	if l.MaxBlocks <= 0 {
		l.MaxBlocks = DefaultMaxBlocks
	}
	return l
}

// nextStep is the step in progress, else the first pending one, else nil.
func nextStep(cp *ckpt.Checkpoint) *ckpt.Step {
	for _, want := range []ckpt.StepStatus{ckpt.StepInProgress, ckpt.StepPending} {
		for i := range cp.Steps {
			if cp.Steps[i].Status == want {
				return &cp.Steps[i]
			}
		}
	}
	return nil
}
