package ckpt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// archiveCopy stores a snapshot of c as a new, archived checkpoint.
func archiveCopy(ctx context.Context, s Store, c *Checkpoint, reason string, l Lifecycle) (string, error) {
	at := l.at()
	name, err := ArchiveName(c.ID, reason, at)
	if err != nil {
		return "", err
	}
	snap := *c.Clone()
	snap.Archived = &Archive{Reason: reason, At: at, From: c.ID}
	e := MustEvent(EventImported, at, l.Actor, Snapshot{State: snap, Rev: c.Rev, Source: "archive of " + c.ID})
	if _, err := s.Append(ctx, name, e, AppendOptions{}); err != nil {
		return "", fmt.Errorf("archiving %s as %s: %w", c.ID, name, err)
	}
	return name, nil
}

// TakeOverCheckpoint hands checkpoint id to a new agent: the old agent's state is
// archived as id_<reason>_<unix> (reason defaults to "crashed"), then a
// taken_over event gives the work to `to` in a new session. It returns the
// new state and the archive's ID.
func TakeOverCheckpoint(ctx context.Context, s Store, id string, to Agent, l Lifecycle) (*Checkpoint, string, error) {
	if to.ID == "" && to.Name == "" {
		return nil, "", fmt.Errorf("%w: a takeover needs the new agent: pass --agent NAME", ErrInvalid)
	}
	if l.Reason == "" {
		l.Reason = "crashed"
	}
	c, err := s.Get(ctx, id, 0)
	if err != nil {
		return nil, "", err
	}
	name, err := archiveCopy(ctx, s, c, l.Reason, l)
	if err != nil {
		return nil, "", err
	}
	e := MustEvent(EventTakenOver, l.at(), l.Actor, Takeover{From: c.Agent, To: to, Session: l.session(), ArchivedAs: name, Reason: l.Reason})
	e.Key = l.Key
	r, err := s.Append(ctx, id, e, AppendOptions{IfRev: c.Rev})
	if err != nil {
		return nil, name, err
	}
	return r.State, name, nil
}

// RestartCheckpoint starts checkpoint id over from scratch: the old state is archived
// as id_aborted_<unix>, then a restarted event resets the work.
func RestartCheckpoint(ctx context.Context, s Store, id string, l Lifecycle) (*Checkpoint, string, error) {
	if l.Reason == "" {
		l.Reason = "aborted"
	}
	c, err := s.Get(ctx, id, 0)
	if err != nil {
		return nil, "", err
	}
	name, err := archiveCopy(ctx, s, c, l.Reason, l)
	if err != nil {
		return nil, "", err
	}
	e := MustEvent(EventRestarted, l.at(), l.Actor, Restart{ArchivedAs: name, Session: l.session(), Reason: l.Reason})
	e.Key = l.Key
	r, err := s.Append(ctx, id, e, AppendOptions{IfRev: c.Rev})
	if err != nil {
		return nil, name, err
	}
	return r.State, name, nil
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
