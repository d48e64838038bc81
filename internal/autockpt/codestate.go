package autockpt

import (
	"context"
	"io"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/codestate"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/request"
)

// RecordCode appends where the code in dir is to checkpoint c when it
// moved since c recorded it (ckpt.EventCode). It is an extra of the
// checkpoint, not one of its four steps: a failure is one warning line on
// out and fails nothing.
func RecordCode(ctx context.Context, out io.Writer, st ckpt.Store, c *ckpt.Checkpoint, dir string, now time.Time) {
	cs, err := codestate.Probe(ctx, dir, process.Host(), now)
	if err == nil && cs != nil && !ckpt.SameCode(c.Code, cs) {
		actor := ckpt.Actor{Agent: c.Agent.ID, Session: c.Session.ID}
		if actor.Agent == "" {
			actor.Agent = "ckpt"
		}
		var e ckpt.Event
		if e, err = request.NewEvent(request.Code{State: cs}, request.Write{At: now, Actor: actor}); err == nil {
			_, err = st.Append(ctx, c.ID, e, ckpt.AppendOptions{})
		}
	}
	if err != nil {
		io.WriteString(out, "ckpt: warning: the code's state was not recorded: "+err.Error()+"\n")
	}
}
