// Package cmdutil is what every ckpt command gets from the root, as gh's
// pkg/cmdutil: the Env of the process (streams, environment, working
// directory, clock, arguments), the Factory that resolves the clock, the
// acting agent and the store from the root's flags and the environment,
// the store openers each binary registers by location scheme, and the usage
// errors and output forms every command shares.
//
// Package cli builds the commands on it; each binary (cmd/ckpt,
// cmd/ckpt-server) assembles its verbs and store openers and hands them to
// cli.Main.
package cmdutil

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Factory is what the root gives a command: streams, clock, acting agent
// and the store, resolved from the persistent flags and the environment.
// A Factory may be copied (a hook opens its store through a copy with
// another working directory): everything it resolves, it resolves from
// its own fields when asked.
type Factory struct {
	// Env is the process the command line runs in.
	Env *Env
	// StoreFlag and AgentFlag are the root's --store and --agent.
	StoreFlag, AgentFlag string
	// NoKeeper is the root's --no-keeper: a command over a PostgreSQL
	// store writes directly and starts no keeper (package keeper).
	NoKeeper bool
	// Stores are the store openers of this binary, by location scheme.
	Stores Stores
	// Store, when set, is the store every command uses instead of opening
	// one (tests and the demo run commands against a memstore this way).
	Store ckpt.Store
	// Wrap, when set, wraps every store OpenStore opens (the CLI's
	// seed-format mirrors).
	Wrap func(f *Factory, st ckpt.Store) ckpt.Store
	// Deferred is an error a help function met (it cannot return one); the
	// root returns it after the command.
	Deferred error

	// reached is set when a command's own code starts (see RunE); errors
	// before that, from cobra's parsing and checks, are usage errors.
	reached bool
	// now is the command's clock, resolved by Prepare.
	now func() time.Time
}

// Prepare resolves the command's clock: Env.Now (time.Now when nil) in
// UTC, or the time CKPT_NOW pins. The root runs it before every command.
func (f *Factory) Prepare() error {
	clock := f.Env.Now
	if clock == nil {
		clock = time.Now
	}
	f.now = func() time.Time { return clock().UTC() }
	if v := f.Env.Var(EnvNow); v != "" {
		t, err := parseNow(v)
		if err != nil {
			return err
		}
		f.now = func() time.Time { return t }
	}
	return nil
}

// Now is the command's clock (CKPT_NOW when set), in UTC.
func (f *Factory) Now() time.Time {
	if f.now == nil {
		return time.Now().UTC() // before Prepare: only tests get here
	}
	return f.now()
}

// The range of clocks CKPT_NOW may pin: from the Unix epoch (the zero
// time means "never" in a checkpoint, and a store would take its own clock
// instead) to the last day in Unix nanoseconds, so no time ckpt compares
// with it is further away than a time.Duration holds.
var (
	minNow = time.Unix(0, 0).UTC()
	maxNow = time.Unix(0, math.MaxInt64).UTC().Truncate(24 * time.Hour)
)

// parseNow reads a CKPT_NOW value: an RFC 3339 time in [minNow, maxNow]. A
// value ckpt would not use as given is refused, never ignored.
func parseNow(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s=%q is not an RFC 3339 time: use a form such as 2026-01-15T14:30:00Z, or unset it", ckpt.ErrInvalid, EnvNow, v)
	}
	t = t.UTC()
	if t.Before(minNow) || t.After(maxNow) {
		return time.Time{}, fmt.Errorf("%w: %s=%q is outside the clock ckpt can use (%s to %s): give a time in that range, or unset it",
			ckpt.ErrInvalid, EnvNow, v, minNow.Format(time.RFC3339), maxNow.Format(time.RFC3339))
	}
	return t, nil
}

// RunE wraps a command's run function as its cobra RunE: it marks that
// the command's own code runs (its errors are not usage errors), then
// calls run.
func (f *Factory) RunE(run func(ctx context.Context, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		f.reached = true
		return run(cmd.Context(), args)
	}
}

// MarkReached records that a command's own code runs, for commands that
// do not go through RunE (the dispatchers to ckpt-server).
func (f *Factory) MarkReached() { f.reached = true }

// Reached reports whether a command's own code ran: an error before that
// came from cobra's parsing and checks, and is a usage error.
func (f *Factory) Reached() bool { return f.reached }

// Actor is the acting agent (--agent, else CKPT_AGENT) and session
// (CKPT_SESSION) recorded on every event.
func (f *Factory) Actor() ckpt.Actor {
	agent := f.AgentFlag
	if agent == "" {
		agent = f.Env.Var(EnvAgent)
	}
	return ckpt.Actor{Agent: agent, Session: f.Env.Var(EnvSession)}
}

// EventActor is who an event records as having made it: the acting agent
// (Actor), else the person running ckpt as "user:NAME", so that ckpt log
// names someone for every change.
func (f *Factory) EventActor() ckpt.Actor {
	a := f.Actor()
	if a.Agent == "" {
		if u := f.User(); u != "" {
			a.Agent = "user:" + u
		}
	}
	return a
}

// User is the login name of the person running ckpt ($USER, else
// $LOGNAME, else the account the process runs as: containers often set
// neither variable), or "" when none can be found.
func (f *Factory) User() string {
	for _, k := range []string{"USER", "LOGNAME"} {
		if v := strings.TrimSpace(f.Env.Var(k)); v != "" {
			return v
		}
	}
	if f.Env.LookupUser != nil {
		return f.Env.LookupUser()
	}
	return ""
}
