package cli

import (
	"context"

	"github.com/ckpt-dev/ckpt/internal/codestate"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
)

// withCodeSince adds to out's warnings what changed in the code since its
// checkpoint recorded it, as seen from dir, where the resumed or
// taking-over session works (codestate.NoteFrom).
func withCodeSince(ctx context.Context, out render.Continuation, dir string) render.Continuation {
	if w := codestate.NoteFrom(ctx, out.Code, dir, process.Host()); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	return out
}
