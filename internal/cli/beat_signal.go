package cli

import (
	"fmt"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/cmdutil"
	"github.com/ckpt-dev/ckpt/internal/process"
)

// signal is the presence signal `ckpt beat` gives the store.
func (o *BeatOptions) signal() (ckpt.Signal, error) {
	sig := ckpt.Signal{At: o.Now(), State: o.State, Reason: strings.TrimSpace(o.Reason), Session: o.Session}
	if sig.Reason != "" && sig.State == "" {
		return sig, cmdutil.Usagef("--reason goes with --state: say what the agent is doing (working, busy, waiting or ended)")
	}
	switch f := strings.ToLower(strings.TrimSpace(o.For)); {
	case f == "":
	case sig.State != ckpt.PresenceWaiting:
		return sig, cmdutil.Usagef("--for goes with --state waiting: say what the agent waits on")
	case f == ckpt.WaitsPerson || f == ckpt.WaitsThing:
		sig.For = f
	default:
		return sig, cmdutil.Usagef("--for %q: a waiting agent waits for a person or a thing (--for person, --for thing)", o.For)
	}
	if o.PID != 0 {
		p := process.Of(o.PID)
		if p == nil {
			return sig, cmdutil.Usagef("--pid %d: no such process on this host", o.PID)
		}
		sig.Process = p
	}
	return sig, nil
}

// presenceFlag reads --state: one of the states a client reports.
type presenceFlag ckpt.PresenceState

func (f *presenceFlag) String() string { return string(*f) }
func (f *presenceFlag) Type() string   { return "STATE" }

func (f *presenceFlag) Set(v string) error {
	s := ckpt.PresenceState(strings.ToLower(strings.TrimSpace(v)))
	if !s.Valid() {
		return fmt.Errorf("unknown state %q: use working, busy, waiting or ended", v)
	}
	*f = presenceFlag(s)
	return nil
}
