package cli

import (
	"context"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/keeper"
)

// HandOff returns st as the store of a command ckpt runs again directly
// after its keeper went away before answering (keeper.LostError, with
// keeper.EnvHandoffKey set): the command's unkeyed append gets the key the
// keeper was sent, so that it is applied once, whether the keeper had
// applied it or not. When it had, the command prints that first result as
// its own (the key is ckpt's, not the user's: there is no repeat to
// report). Without a hand-off it returns st.
func HandOff(f *cmdutil.Factory, st ckpt.Store) ckpt.Store {
	key := f.Env.Var(keeper.EnvHandoffKey)
	// Keys ckpt makes: the keeper client's (keeper-…) and, over a server,
	// the spool's (remote.NewKey, k-…); "none" hands no append off.
	if !strings.HasPrefix(key, "keeper-") && !strings.HasPrefix(key, "k-") {
		return st
	}
	return &handedOff{Store: st, key: key}
}

type handedOff struct {
	ckpt.Store
	key string
}

func (h *handedOff) Append(ctx context.Context, id string, e ckpt.Event, o ckpt.AppendOptions) (ckpt.AppendResult, error) {
	ours := e.Key == "" && h.key != ""
	if ours {
		// Sent to the keeper as a made key (ckpt.KeyNew), maybe applied.
		e.Key, h.key, o.KeyOrigin = h.key, "", ckpt.KeyResent
	}
	res, err := h.Store.Append(ctx, id, e, o)
	if ours && res.Replayed {
		res.Replayed = false
	}
	return res, err
}

// Unwrap returns the store under the hand-off, so that its capabilities
// reach callers through ckpt.As.
func (h *handedOff) Unwrap() ckpt.Store { return h.Store }
