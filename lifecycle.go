package ckpt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotResumable is returned by Resume for a checkpoint that is done or
// marked not resumable, unless forced (seed 003's rule).
var ErrNotResumable = errors.New("checkpoint not resumable")

// CrashLoopResumes is how many resumes without progress make a crash loop.
const CrashLoopResumes = 3

// NewSessionID returns a fresh random session ID.
func NewSessionID() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("ckpt: reading random bytes: %v", err)) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

// Lifecycle carries what every lifecycle operation needs besides its own
// arguments. A zero At means time.Now(); an empty SessionID gets a fresh one.
type Lifecycle struct {
	At        time.Time
	Actor     Actor
	SessionID string
	Key       string // idempotency key of the main event
	Reason    string // why: recorded in the event and the archive name
}

func (l Lifecycle) at() time.Time {
	if l.At.IsZero() {
		return time.Now().UTC()
	}
	return l.At.UTC()
}

func (l Lifecycle) session() Session {
	id := l.SessionID
	if id == "" {
		id = NewSessionID()
	}
	return Session{ID: id, StartedAt: l.at()}
}

// ResumeCheckpoint starts a new session on checkpoint id (a session.resumed event)
// and returns the state after it. It refuses, with an error wrapping
// ErrNotResumable, a checkpoint that is done or marked not resumable unless
// force is set. agent, when not nil, replaces the recorded agent details.
func ResumeCheckpoint(ctx context.Context, s Store, id string, l Lifecycle, agent *Agent, force bool) (*Checkpoint, error) {
	c, err := s.Get(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	if !force {
		switch {
		case c.Archived != nil:
			return nil, fmt.Errorf("%w: %s was archived (%s); resume the live checkpoint instead, or pass --force", ErrNotResumable, id, c.Archived.Reason)
		case c.Status == StatusDone:
			return nil, fmt.Errorf("%w: %s is done; pass --force to reopen it", ErrNotResumable, id)
		case !c.Resume.Resumable:
			return nil, fmt.Errorf("%w: %s is marked not resumable; pass --force to resume it anyway, or ckpt restart %s", ErrNotResumable, id, id)
		}
	}
	e := MustEvent(EventResumed, l.at(), l.Actor, SessionChange{Session: l.session(), Agent: agent})
	e.Key = l.Key
	r, err := s.Append(ctx, id, e, AppendOptions{})
	if err != nil {
		return nil, err
	}
	return r.State, nil
}

// ArchiveName is the ID an archived copy of id gets: id_<reason>_<unix time>
// (seed 002's naming).
func ArchiveName(id, reason string, at time.Time) (string, error) {
	name := fmt.Sprintf("%s_%s_%d", id, reason, at.Unix())
	if err := ValidateID(name); err != nil {
		return "", fmt.Errorf("archive name for %s: %w", id, err)
	}
	return name, nil
}

// freeArchiveName returns ArchiveName, or it with _2, _3… when an archive of
// that name exists already (two takeovers within one second).
func freeArchiveName(ctx context.Context, s Store, id, reason string, at time.Time) (string, error) {
	base, err := ArchiveName(id, reason, at)
	if err != nil {
		return "", err
	}
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s_%d", base, i)
			if err := ValidateID(name); err != nil {
				return "", fmt.Errorf("archive name for %s: %w", id, err)
			}
		}
		if _, err := s.Get(ctx, name, 0); errors.Is(err, ErrNotFound) {
			return name, nil
		} else if err != nil {
			return "", err
		}
	}
}

// handOver is the shared shape of takeover and restart: record the main
// event (keyed, compare-and-swap on the revision read), then store the state
// from just before it as a new archived checkpoint. Recording first makes a
// retry with the same key safe: the replayed event names the archive, and
// an archive that exists already is left as it is. A crash between the two
// leaves the old state in the history (ckpt show --rev) and a retry with the
// key finishes the copy.
func handOver(ctx context.Context, s Store, id string, l Lifecycle, event func(archive string) Event) (*Checkpoint, string, error) {
	c, err := s.Get(ctx, id, 0)
	if err != nil {
		return nil, "", err
	}
	name, err := freeArchiveName(ctx, s, id, l.Reason, l.at())
	if err != nil {
		return nil, "", err
	}
	e := event(name)
	e.Key = l.Key
	r, err := s.Append(ctx, id, e, AppendOptions{IfRev: c.Rev})
	if err != nil {
		return nil, "", err
	}
	if r.Replayed {
		var ref struct {
			ArchivedAs string `json:"archived_as"`
		}
		if err := json.Unmarshal(r.Event.Data, &ref); err != nil || ref.ArchivedAs == "" {
			return nil, "", fmt.Errorf("%w: key %q was used by a %s event, not a %s", ErrInvalid, l.Key, r.Event.Type, e.Type)
		}
		name = ref.ArchivedAs
	}
	old, err := s.Get(ctx, id, r.Event.Seq-1)
	if err != nil {
		return nil, "", err
	}
	snap := *old
	snap.Archived = &Archive{Reason: l.Reason, At: r.Event.At, From: id}
	ae := MustEvent(EventImported, r.Event.At, l.Actor, Snapshot{State: snap, Rev: old.Rev, Source: "archive of " + id, New: true})
	if _, err := s.Append(ctx, name, ae, AppendOptions{}); err != nil && !errors.Is(err, ErrExists) {
		return nil, "", fmt.Errorf("archiving %s as %s: %w", id, name, err)
	}
	return r.State, name, nil
}

// TakeOverCheckpoint hands checkpoint id to a new agent: a taken_over event
// gives the work to `to` in a new session, and the old agent's state is
// archived as id_<reason>_<unix> (reason defaults to "crashed"). It returns
// the new state and the archive's ID. With l.Key set, a retry is safe.
func TakeOverCheckpoint(ctx context.Context, s Store, id string, to Agent, l Lifecycle) (*Checkpoint, string, error) {
	if to.ID == "" && to.Name == "" {
		return nil, "", fmt.Errorf("%w: a takeover needs the new agent: pass --agent NAME", ErrInvalid)
	}
	if l.Reason == "" {
		l.Reason = "crashed"
	}
	var from Agent
	if c, err := s.Get(ctx, id, 0); err == nil {
		from = c.Agent
	}
	return handOver(ctx, s, id, l, func(archive string) Event {
		return MustEvent(EventTakenOver, l.at(), l.Actor, Takeover{From: from, To: to, Session: l.session(), ArchivedAs: archive, Reason: l.Reason})
	})
}

// RestartCheckpoint starts checkpoint id over from scratch: a restarted
// event resets the work, and the old state is archived as id_aborted_<unix>.
func RestartCheckpoint(ctx context.Context, s Store, id string, l Lifecycle) (*Checkpoint, string, error) {
	if l.Reason == "" {
		l.Reason = "aborted"
	}
	return handOver(ctx, s, id, l, func(archive string) Event {
		return MustEvent(EventRestarted, l.at(), l.Actor, Restart{ArchivedAs: archive, Session: l.session(), Reason: l.Reason})
	})
}

// RestoreCheckpoint brings checkpoint id back to the state it had at revision rev by
// appending a restored event; the history keeps everything.
func RestoreCheckpoint(ctx context.Context, s Store, id string, rev int64, l Lifecycle) (*Checkpoint, error) {
	if rev < 1 {
		return nil, fmt.Errorf("%w: revision %d: give a revision of 1 or more (see ckpt log %s)", ErrInvalid, rev, id)
	}
	old, err := s.Get(ctx, id, rev)
	if err != nil {
		return nil, err
	}
	e := MustEvent(EventRestored, l.at(), l.Actor, Snapshot{State: *old, Rev: rev})
	e.Key = l.Key
	r, err := s.Append(ctx, id, e, AppendOptions{})
	if err != nil {
		return nil, err
	}
	return r.State, nil
}
