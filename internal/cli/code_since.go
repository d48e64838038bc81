package cli

import (
	"context"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/codestate"
	"github.com/ckpt-dev/ckpt/process"
	"github.com/ckpt-dev/ckpt/render"
)

// codeSince says what changed in the code since was recorded, for a
// session whose code is now (nil: not in a repository); "" when nothing
// did or nothing was recorded (render.CodeSince).
func codeSince(ctx context.Context, was, now *ckpt.CodeState) string {
	if was == nil {
		return ""
	}
	moved := 0
	if now != nil {
		moved = codestate.Since(ctx, was, now).Moved
	}
	return render.CodeSince(was, now, moved)
}

// withCodeSince adds to out's warnings what changed in the code since c
// recorded it, as seen from dir, where the resumed or taking-over session
// works; out as it is when c recorded no code state or dir is "".
func withCodeSince(ctx context.Context, out continuation, c *ckpt.Checkpoint, dir string) continuation {
	if c.Code == nil || dir == "" {
		return out
	}
	now, err := codestate.Probe(ctx, dir, process.Host(), c.Code.At)
	if err != nil {
		return out
	}
	if w := codeSince(ctx, c.Code, now); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out
}
