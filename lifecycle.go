package ckpt

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrNotResumable is returned by Resume for a checkpoint that is done or
// marked not resumable, unless forced (sitebuilder's (seed 003) rule).
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
	// Force goes past the rules a RefusedError reports as Forcible.
	Force bool
	// IfRev, when > 0, makes the operation a single compare-and-swap on
	// that revision (a *ConflictError if the checkpoint moved). When 0 the
	// operation reads again and retries on a conflict, like Update.
	IfRev int64
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

// As finds, in s or in a store s wraps, the first that is a T: a decorator
// (one that mirrors, bounds, spools or scopes calls) has an Unwrap() Store
// method returning what it wraps, and As looks through any number of them.
// It is how a capability (Checker, Repairer, LifecycleRunner) reaches the
// caller through wrappers that do not offer it themselves.
func As[T any](s Store) (T, bool) {
	for s != nil {
		if t, ok := s.(T); ok {
			return t, true
		}
		w, ok := s.(interface{ Unwrap() Store })
		if !ok {
			break
		}
		s = w.Unwrap()
	}
	var zero T
	return zero, false
}

// LifecycleRunner is a store that runs the lifecycle operations itself,
// next to its data: a server's client sends each one to the server, which
// runs it there under its own rules and token grants in one round trip
// instead of the reads and compare-and-swaps an operation is made of. Every
// lifecycle function of this package (and so every surface: CLI, MCP, the
// monitor) hands its operation to the store's runner when it has one (see
// As) and runs it itself otherwise. A runner answers exactly what the
// function would, errors included.
type LifecycleRunner interface {
	RunLifecycle(ctx context.Context, op LifecycleOp) (LifecycleOutcome, error)
}

// The lifecycle operations' names, as LifecycleOp.Verb.
const (
	OpResume   = "resume"
	OpTakeover = "takeover"
	OpRestart  = "restart"
	OpArchive  = "archive"
	OpRestore  = "restore"
	OpAbandon  = "abandon"
)

// LifecycleOp is one lifecycle operation with its arguments.
type LifecycleOp struct {
	Verb      string // one of the Op constants
	ID        string
	Lifecycle Lifecycle
	Agent     *Agent // resume: replaces the recorded agent details
	Force     bool   // resume: its force argument (besides Lifecycle.Force)
	To        Agent  // takeover: the new agent
	Rev       int64  // restore: the revision to go back to
	// Note is archive's and abandon's reason (a few words); Lifecycle.Reason
	// is the one word a takeover or restart names its archive with.
	Note        string
	QuietBefore time.Time // abandon: the agent is quiet if last seen before this
}

// LifecycleOutcome is what a lifecycle operation returns.
type LifecycleOutcome struct {
	State      *Checkpoint
	ArchivedAs string // takeover, restart: the archive's ID
	// Changed is false when archive found the checkpoint archived already,
	// or abandon found it not quiet (nothing was appended).
	Changed  bool
	Replayed bool  // archive: the key was applied already
	Event    Event // archive: the event appended (or replayed)
}

// runElsewhere hands op to s's LifecycleRunner if it has one (ok true).
func runElsewhere(ctx context.Context, s Store, op LifecycleOp) (LifecycleOutcome, bool, error) {
	r, ok := As[LifecycleRunner](s)
	if !ok {
		return LifecycleOutcome{}, false, nil
	}
	out, err := r.RunLifecycle(ctx, op)
	return out, true, err
}

// RunLifecycle runs op over s: by s's LifecycleRunner when it has one,
// else here, by the function of its verb. It is what a decorator that
// offers LifecycleRunner itself calls for the store it wraps.
func RunLifecycle(ctx context.Context, s Store, op LifecycleOp) (LifecycleOutcome, error) {
	var out LifecycleOutcome
	var err error
	switch op.Verb {
	case OpResume:
		out.State, err = ResumeCheckpoint(ctx, s, op.ID, op.Lifecycle, op.Agent, op.Force)
	case OpTakeover:
		out.State, out.ArchivedAs, err = TakeOverCheckpoint(ctx, s, op.ID, op.To, op.Lifecycle)
	case OpRestart:
		out.State, out.ArchivedAs, err = RestartCheckpoint(ctx, s, op.ID, op.Lifecycle)
	case OpRestore:
		out.State, err = RestoreCheckpoint(ctx, s, op.ID, op.Rev, op.Lifecycle)
	case OpArchive:
		var r AppendResult
		var already bool
		r, already, err = ArchiveCheckpoint(ctx, s, op.ID, op.Note, op.Lifecycle)
		out = LifecycleOutcome{State: r.State, Changed: !already, Replayed: r.Replayed, Event: r.Event}
	case OpAbandon:
		out.State, out.Changed, err = AbandonCheckpoint(ctx, s, op.ID, op.QuietBefore, op.Note, op.Lifecycle)
	default:
		err = fmt.Errorf("%w: no lifecycle operation %q: use resume, takeover, restart, archive, restore or abandon", ErrInvalid, op.Verb)
	}
	return out, err
}

// RefusedError is a lifecycle operation its rules refuse: taking over,
// resuming or restarting finished or archived work, archiving live work.
// It wraps Err (ErrNotResumable, or ErrInvalid for archiving live work) and
// carries no surface's wording: each surface says how to force it.
type RefusedError struct {
	Op       string // takeover, restart, resume, archive, restore
	ID       string
	Rule     Rule   // which rule refused it
	Why      string // e.g. "is done"
	Forcible bool   // Lifecycle.Force would let the operation go on
	Err      error
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("%v: %s %s", e.Err, e.ID, e.Why)
}

func (e *RefusedError) Unwrap() error { return e.Err }

// Rule names a lifecycle rule, for surfaces that word their own advice.
type Rule string

// The lifecycle rules.
const (
	RuleArchived     Rule = "archived"      // the checkpoint is an archive, a record
	RuleDone         Rule = "done"          // the work is done
	RuleNotResumable Rule = "not_resumable" // the work is marked not resumable
	RuleLive         Rule = "live"          // the work has not ended (archive)
)

func refuse(op, id string, rule Rule, err error, forcible bool, format string, args ...any) error {
	return &RefusedError{Op: op, ID: id, Rule: rule, Why: fmt.Sprintf(format, args...), Forcible: forcible, Err: err}
}

// The lifecycle rules, one function per operation; every caller (CLI, MCP,
// a server) goes through them.

// checkResume refuses to continue work that has ended or is only a record.
// A resume may be forced even on an archive (reopening a record on
// purpose); a takeover never: it would fork the work into two live copies.
func checkResume(op string, c *Checkpoint, force bool) error {
	switch {
	case c.Archived != nil && !(op == "resume" && force):
		return refuse(op, c.ID, RuleArchived, ErrNotResumable, op == "resume", "is an archive (%s at %s), a record rather than work; %s the live checkpoint%s instead",
			c.Archived.Reason, c.Archived.At.UTC().Format(time.RFC3339), strings.Replace(op, "takeover", "take over", 1), liveOf(c))
	case force:
		return nil
	case c.Status == StatusDone:
		return refuse(op, c.ID, RuleDone, ErrNotResumable, true, "is done")
	case !c.Resume.Resumable:
		return refuse(op, c.ID, RuleNotResumable, ErrNotResumable, true, "is marked not resumable")
	}
	return nil
}

// checkRestart refuses to restart an archive, or finished work unless forced;
// work marked not resumable may be restarted (that is what restart is for).
func checkRestart(c *Checkpoint, force bool) error {
	switch {
	case c.Archived != nil:
		return refuse("restart", c.ID, RuleArchived, ErrNotResumable, false, "is an archive (%s), a record rather than work; restart the live checkpoint%s instead",
			c.Archived.Reason, liveOf(c))
	case !force && c.Status == StatusDone:
		return refuse("restart", c.ID, RuleDone, ErrNotResumable, true, "is done: restarting it would throw its finished work away")
	}
	return nil
}

// liveOf names the checkpoint an archive was copied from, as " X".
func liveOf(c *Checkpoint) string {
	if c.Archived == nil || c.Archived.From == "" {
		return ""
	}
	return " " + c.Archived.From
}

// update is Update, or with l.IfRev set one compare-and-swap on that revision.
func (l Lifecycle) update(ctx context.Context, s Store, id string, fn func(c *Checkpoint) (Event, error)) (AppendResult, error) {
	if l.IfRev <= 0 {
		return update(ctx, s, id, fn, handOverPatience)
	}
	c, err := s.Get(ctx, id, 0)
	if err != nil {
		return AppendResult{}, err
	}
	e, err := fn(c)
	if errors.Is(err, ErrNoChange) {
		return AppendResult{State: c}, nil
	}
	if err != nil {
		return AppendResult{}, err
	}
	return s.Append(ctx, id, e, AppendOptions{IfRev: l.IfRev})
}

// ResumeCheckpoint starts a new session on checkpoint id (a session.resumed event)
// and returns the state after it. It refuses, with a *RefusedError wrapping
// ErrNotResumable, an archive, and a checkpoint that is done or marked not
// resumable unless force (or l.Force) is set. agent, when not nil, replaces
// the recorded agent details.
func ResumeCheckpoint(ctx context.Context, s Store, id string, l Lifecycle, agent *Agent, force bool) (*Checkpoint, error) {
	if out, ok, err := runElsewhere(ctx, s, LifecycleOp{Verb: OpResume, ID: id, Lifecycle: l, Agent: agent, Force: force}); ok {
		return out.State, err
	}
	r, err := l.update(ctx, s, id, func(c *Checkpoint) (Event, error) {
		if err := checkResume("resume", c, force || l.Force); err != nil {
			return Event{}, err
		}
		e := MustEvent(EventResumed, l.at(), l.Actor, SessionChange{Session: l.session(), Agent: agent})
		e.Key = l.Key
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return r.State, nil
}

// MaxReasonLen bounds an archive reason, which becomes part of an ID.
const MaxReasonLen = 40

// ValidateArchiveReason checks a takeover's or restart's reason: one word
// of letters, digits, '.', '_' or '-', at most MaxReasonLen bytes, because
// it becomes part of the archive's ID. The error wraps ErrInvalid.
func ValidateArchiveReason(reason string) error {
	if reason == "" || len(reason) > MaxReasonLen || strings.Contains(reason, "/") || ValidateID(reason) != nil {
		return fmt.Errorf("%w: archive reason %q becomes part of the archive's ID: it must be one word of letters, digits, '.', '_' or '-', at most %d bytes (e.g. crashed)",
			ErrInvalid, reason, MaxReasonLen)
	}
	return nil
}

// archiveSerials is how many archives of one checkpoint may share a reason
// and a second: ArchiveName, then _2 … _99.
const archiveSerials = 99

// archiveSerialRoom is the room ArchiveName leaves for a serial ("_99").
const archiveSerialRoom = 3

// ArchiveName is the ID an archived copy of id gets: id_<reason>_<unix time>
// (agent-checkpoints' (seed 002) naming). When that would be too long to be an ID, the end of
// id is cut and a short hash of the whole id put in its place
// (<start of id>-<8 hex>_<reason>_<unix>), so every valid ID can be archived
// and two IDs share an archive name only if their hashes collide (and even
// then creation claims the name: the second gets _2).
func ArchiveName(id, reason string, at time.Time) (string, error) {
	if err := ValidateID(id); err != nil {
		return "", err
	}
	if err := ValidateArchiveReason(reason); err != nil {
		return "", err
	}
	suffix := fmt.Sprintf("_%s_%d", reason, at.Unix())
	name := id + suffix
	// A shortened name is exactly MaxIDLen-archiveSerialRoom bytes and a
	// plain one always shorter, so no plain name can equal a shortened one.
	if len(name)+archiveSerialRoom >= MaxIDLen {
		sum := sha256.Sum256([]byte(id))
		tag := "-" + hex.EncodeToString(sum[:4])
		keep := MaxIDLen - archiveSerialRoom - len(suffix) - len(tag)
		// keep > 0 always: MaxReasonLen bounds the suffix.
		name = id[:keep] + tag + suffix
	}
	if err := ValidateID(name); err != nil {
		return "", fmt.Errorf("archive name for %s: %w", id, err)
	}
	return name, nil
}

// createArchive stores c as a new, archived checkpoint under a name of its
// own: ArchiveName, or it with _2, _3… when that exists. Creation itself
// claims the name (a snapshot with New set fails with ErrExists), so two
// hand-overs never share an archive.
func createArchive(ctx context.Context, s Store, c *Checkpoint, l Lifecycle) (string, error) {
	base, err := ArchiveName(c.ID, l.Reason, l.at())
	if err != nil {
		return "", err
	}
	snap := *c
	snap.Archived = &Archive{Reason: l.Reason, At: l.at(), From: c.ID}
	e := MustEvent(EventImported, l.at(), l.Actor, Snapshot{State: snap, Rev: c.Rev, Source: "archive of " + c.ID, New: true})
	for i := 1; i <= archiveSerials; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		_, err := s.Append(ctx, name, e, AppendOptions{})
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, ErrExists) {
			return "", fmt.Errorf("archiving %s as %s: %w", c.ID, name, err)
		}
	}
	return "", fmt.Errorf("%w: %s has %d archives named %s already", ErrExists, c.ID, archiveSerials, base)
}

// handOver is the shared shape of takeover and restart. Each attempt reads
// the checkpoint, checks the rules, stores the state read as a new archive
// under a name of its own, and then appends the main event naming that
// archive with IfRev set to the revision read. So an acknowledged hand-over
// has archived exactly the state it replaced, and a process killed halfway
// leaves either no hand-over (at most an archive copy that no event names:
// a complete, harmless record that ckpt prune removes in time) or a
// complete one. An attempt that loses the compare-and-swap deletes its
// archive and tries again (bounded, like Update). A repeated key replays
// the first hand-over and returns the archive it named.
func handOver(ctx context.Context, s Store, id string, l Lifecycle, check func(*Checkpoint) error, event func(c *Checkpoint, archive string) Event) (*Checkpoint, string, error) {
	if err := ValidateID(id); err != nil {
		return nil, "", err
	}
	if err := ValidateArchiveReason(l.Reason); err != nil {
		return nil, "", err
	}
	var archive string // the archive of the current attempt
	drop := func() {
		if archive != "" {
			// Best effort: an unnamed archive is a harmless record.
			_ = s.Delete(context.WithoutCancel(ctx), archive)
			archive = ""
		}
	}
	r, err := l.update(ctx, s, id, func(c *Checkpoint) (Event, error) {
		drop()
		if err := check(c); err != nil {
			return Event{}, err
		}
		name, err := createArchive(ctx, s, c, l)
		if err != nil {
			return Event{}, err
		}
		archive = name
		e := event(c, name)
		e.Key = l.Key
		return e, nil
	})
	if err != nil || r.Replayed {
		drop()
	}
	if err != nil {
		return nil, "", err
	}
	name := archive
	if r.Replayed {
		var ref struct {
			ArchivedAs string `json:"archived_as"`
		}
		if err := unmarshalJSON(r.Event.Data, &ref); err != nil || ref.ArchivedAs == "" {
			return nil, "", fmt.Errorf("%w: key %q was used by a %s event, not a hand-over", ErrInvalid, l.Key, r.Event.Type)
		}
		name = ref.ArchivedAs
	}
	return r.State, name, nil
}

// TakeOverCheckpoint hands checkpoint id to a new agent: the old agent's
// state is archived as id_<reason>_<unix> (reason defaults to "crashed"),
// then a taken_over event gives the work to `to` in a new session. It
// returns the new state and the archive's ID. It refuses an archive, and
// work that is done or marked not resumable unless l.Force (a
// *RefusedError). Concurrent writers do not make it fail: it reads again
// and retries (see handOver). With l.Key set, a retry is safe.
func TakeOverCheckpoint(ctx context.Context, s Store, id string, to Agent, l Lifecycle) (*Checkpoint, string, error) {
	if out, ok, err := runElsewhere(ctx, s, LifecycleOp{Verb: OpTakeover, ID: id, Lifecycle: l, To: to}); ok {
		return out.State, out.ArchivedAs, err
	}
	if strings.TrimSpace(to.ID) == "" && strings.TrimSpace(to.Name) == "" {
		return nil, "", fmt.Errorf("%w: a takeover needs the new agent (the one that continues the work)", ErrInvalid)
	}
	if l.Reason == "" {
		l.Reason = "crashed"
	}
	session := l.session()
	return handOver(ctx, s, id, l,
		func(c *Checkpoint) error { return checkResume("takeover", c, l.Force) },
		func(c *Checkpoint, archive string) Event {
			return MustEvent(EventTakenOver, l.at(), l.Actor, Takeover{From: c.Agent, To: to, Session: session, ArchivedAs: archive, Reason: l.Reason})
		})
}

// RestartCheckpoint starts checkpoint id over from scratch: the old state is
// archived as id_aborted_<unix> (or the given reason), then a restarted
// event resets the work, from the first phase of a seed 002 stage
// (RestartStage). It refuses an archive, and done work unless
// l.Force; it retries under concurrent writers like TakeOverCheckpoint.
func RestartCheckpoint(ctx context.Context, s Store, id string, l Lifecycle) (*Checkpoint, string, error) {
	if out, ok, err := runElsewhere(ctx, s, LifecycleOp{Verb: OpRestart, ID: id, Lifecycle: l}); ok {
		return out.State, out.ArchivedAs, err
	}
	if l.Reason == "" {
		l.Reason = "aborted"
	}
	session := l.session()
	return handOver(ctx, s, id, l,
		func(c *Checkpoint) error { return checkRestart(c, l.Force) },
		func(c *Checkpoint, archive string) Event {
			return MustEvent(EventRestarted, l.at(), l.Actor, Restart{ArchivedAs: archive, Session: session, Reason: l.Reason, Stage: RestartStage(c.Stage)})
		})
}

// RestartStage is the stage a restart from scratch starts over from: for a
// stage in agent-checkpoints' (seed 002) form "S2.P2", its stage's first
// phase, "S2.P1" (the document's Scenario 3: "New agent starts from
// S2.P1"); "" (the stage is kept) for any other, whose first stage ckpt
// cannot know.
func RestartStage(stage string) string {
	s, p, ok := strings.Cut(stage, ".P")
	if !ok || len(s) < 2 || s[0] != 'S' || !allDigits(s[1:]) || !allDigits(p) {
		return ""
	}
	return s + ".P1"
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// ArchiveCheckpoint archives checkpoint id (an archived event with reason,
// a few words): it is kept with its history but left out of listings. Work
// that has not ended (not done, failed or abandoned) is refused unless
// l.Force, since archiving it would hide live work. A checkpoint archived
// already is left alone: already is true, nothing is appended and r.State is
// the state as it is.
func ArchiveCheckpoint(ctx context.Context, s Store, id, reason string, l Lifecycle) (r AppendResult, already bool, err error) {
	if out, ok, err := runElsewhere(ctx, s, LifecycleOp{Verb: OpArchive, ID: id, Lifecycle: l, Note: reason}); ok {
		return AppendResult{State: out.State, Event: out.Event, Replayed: out.Replayed}, !out.Changed, err
	}
	reason = strings.Join(strings.Fields(reason), " ")
	if reason == "" {
		return AppendResult{}, false, fmt.Errorf("%w: an archive needs a reason, e.g. complete", ErrInvalid)
	}
	r, err = l.update(ctx, s, id, func(c *Checkpoint) (Event, error) {
		switch {
		case c.Archived != nil:
			return Event{}, ErrNoChange
		case !c.Status.Final() && !l.Force:
			return Event{}, refuse("archive", id, RuleLive, ErrInvalid, true, "is %s: archiving it would hide live work from listings", c.Status)
		}
		e := MustEvent(EventArchived, l.at(), l.Actor, Archive{Reason: reason, At: l.at()})
		e.Key = l.Key
		return e, nil
	})
	if err != nil {
		return AppendResult{}, false, err
	}
	return r, r.Event.Seq == 0, nil
}

// RestoreCheckpoint brings checkpoint id back to the state it had at revision rev by
// appending a restored event; the history keeps everything. It refuses a
// revision past the last (ErrNotFound), the current revision (nothing to
// restore: ErrInvalid), and an archive unless l.Force.
func RestoreCheckpoint(ctx context.Context, s Store, id string, rev int64, l Lifecycle) (*Checkpoint, error) {
	if out, ok, err := runElsewhere(ctx, s, LifecycleOp{Verb: OpRestore, ID: id, Lifecycle: l, Rev: rev}); ok {
		return out.State, err
	}
	if rev < 1 {
		return nil, fmt.Errorf("%w: revision %d: a revision to restore is 1 or more", ErrInvalid, rev)
	}
	var old *Checkpoint
	r, err := l.update(ctx, s, id, func(c *Checkpoint) (Event, error) {
		switch {
		case rev > c.Rev:
			return Event{}, fmt.Errorf("%w: %s has no revision %d: it is at revision %d", ErrNotFound, id, rev, c.Rev)
		case rev == c.Rev:
			return Event{}, fmt.Errorf("%w: %s is at revision %d already: nothing to restore", ErrInvalid, id, rev)
		case c.Archived != nil && !l.Force:
			return Event{}, refuse("restore", id, RuleArchived, ErrNotResumable, true, "is an archive (%s): restoring it changes a record", c.Archived.Reason)
		}
		if old == nil {
			var err error
			if old, err = s.Get(ctx, id, rev); err != nil {
				return Event{}, err
			}
		}
		e := MustEvent(EventRestored, l.at(), l.Actor, Snapshot{State: *old, Rev: rev})
		e.Key = l.Key
		return e, nil
	})
	if err != nil {
		return nil, err
	}
	return r.State, nil
}

// AbandonCheckpoint marks checkpoint id abandoned because its agent fell
// silent (a status event with the reason). It is a compare-and-swap like
// every lifecycle write, and it checks again on the state it swaps: work
// that has ended, an archive, and an agent seen at or after quietBefore
// (it wrote or beat in the meantime) are left alone, and abandoned is false.
func AbandonCheckpoint(ctx context.Context, s Store, id string, quietBefore time.Time, reason string, l Lifecycle) (c *Checkpoint, abandoned bool, err error) {
	if out, ok, err := runElsewhere(ctx, s, LifecycleOp{Verb: OpAbandon, ID: id, Lifecycle: l, Note: reason, QuietBefore: quietBefore}); ok {
		return out.State, out.Changed, err
	}
	r, err := l.update(ctx, s, id, func(c *Checkpoint) (Event, error) {
		if c.Archived != nil || c.Status.Final() || !c.LastSeen().Before(quietBefore) {
			return Event{}, ErrNoChange
		}
		e := MustEvent(EventStatus, l.at(), l.Actor, StatusChange{Status: StatusAbandoned, Reason: reason})
		e.Key = l.Key
		return e, nil
	})
	if err != nil {
		return nil, false, err
	}
	return r.State, r.Event.Seq != 0, nil
}
