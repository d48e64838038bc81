package mirror

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
)

// Options are how mirrors are written.
type Options struct {
	// Warn receives one line per mirror that could not be written; nil
	// drops them.
	Warn func(msg string)
	// Now is the time of backups and STATUS.md (CKPT_NOW pins it in
	// scripts); nil is time.Now.
	Now func() time.Time
	// Formats, when set, replaces NewFormat (tests shorten lock timeouts).
	Formats func(name string) (protocols.Format, error)
}

// Store is a ckpt.Store that writes seed-format mirrors after every change
// it makes. It is safe for concurrent use if the store it wraps is.
type Store struct {
	ckpt.Store
	list    List
	entries []Entry
	opts    Options
	// agentFiles serializes this process's rewrites of agent-checkpoints
	// files, each of which carries the coordination times of the one it
	// replaces (a follow and the escalations write the same file).
	agentFiles sync.Mutex
}

// New returns the mirrors of entries (of list) over st. Unlike Wrap it
// always decorates, even with no entries.
func New(st ckpt.Store, list List, entries []Entry, opts Options) *Store {
	return &Store{Store: st, list: list, entries: entries, opts: opts}
}

// Open reads list and returns its mirrors over st.
func Open(st ckpt.Store, list List, opts Options) (*Store, error) {
	cfg, err := list.Read()
	if err != nil {
		return nil, err
	}
	return New(st, list, cfg.Mirrors, opts), nil
}

// Wrap returns st decorated with the mirrors of list, or st itself when
// the list has none, so a store without mirrors pays one failed file open
// and nothing per write. A damaged list is a warning and leaves st as it
// is.
func Wrap(st ckpt.Store, list List, opts Options) ckpt.Store {
	cfg, err := list.Read()
	if err != nil {
		warn(opts, "mirrors not written: "+err.Error())
		return st
	}
	if len(cfg.Mirrors) == 0 {
		return st
	}
	return New(st, list, cfg.Mirrors, opts)
}

// Entries returns the mirror entries.
func (m *Store) Entries() []Entry { return m.entries }

// MirrorList returns the mirror list the entries came from.
func (m *Store) MirrorList() List { return m.list }

// Unwrap returns the store under the mirrors.
func (m *Store) Unwrap() ckpt.Store { return m.Store }

func warn(o Options, msg string) {
	if o.Warn != nil {
		o.Warn(msg)
	}
}

func (m *Store) now() time.Time {
	if m.opts.Now != nil {
		return m.opts.Now()
	}
	return time.Now().UTC()
}

// Append appends through the wrapped store and then, for a change that was
// made (not a replayed key), writes the checkpoint's mirrors.
func (m *Store) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	res, err := m.Store.Append(ctx, id, e, opts)
	if err != nil || res.Replayed || res.State == nil {
		return res, err
	}
	m.Write(ctx, res.State, &res.Event)
	return res, nil
}

// RunLifecycle implements ckpt.LifecycleRunner. Over a store that runs the
// lifecycle operations itself (a server's client), the operation runs
// there and the mirrors are written from the state it returns; over any
// other store it runs here, through the mirrors' Append, as without them.
func (m *Store) RunLifecycle(ctx context.Context, op ckpt.LifecycleOp) (ckpt.LifecycleOutcome, error) {
	if _, ok := ckpt.As[ckpt.LifecycleRunner](m.Store); !ok {
		// Hide this method (and Unwrap) so the operation does not come back here.
		return ckpt.RunLifecycle(ctx, struct{ ckpt.Store }{m}, op)
	}
	out, err := ckpt.RunLifecycle(ctx, m.Store, op)
	if err == nil && out.State != nil {
		m.Write(ctx, out.State, nil)
	}
	return out, err
}

// Beat records the heartbeat and rewrites the mirrors, whose files carry
// the last sign of life the seed systems' own stale checks read (agent-checkpoints' (seed 002)
// last_checkpoint, sitebuilder's (seed 003) heartbeat.last_beat).
func (m *Store) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	if err := m.Store.Beat(ctx, id, sig); err != nil {
		return err
	}
	if !m.selects(id) {
		return nil
	}
	c, err := m.Store.Get(ctx, id, 0)
	if err != nil {
		warn(m.opts, fmt.Sprintf("mirror of %s not written: reading it after the heartbeat: %v", id, err))
		return nil
	}
	m.Write(ctx, c, nil)
	return nil
}

func (m *Store) selects(id string) bool {
	return slices.ContainsFunc(m.entries, func(e Entry) bool { return e.Selects(id) })
}

// Write writes c in every format whose entry selects it, warning about each
// that fails; e is the event that made c, nil for a heartbeat or a sync.
func (m *Store) Write(ctx context.Context, c *ckpt.Checkpoint, e *ckpt.Event) {
	for _, entry := range m.entries {
		if !entry.Selects(c.ID) || echoesItsSource(entry, e) {
			continue
		}
		if entry.Unbound() {
			warn(m.opts, fmt.Sprintf("mirror %s under %s not written for %s: it selects %s, and each would overwrite the others' file; %s", entry.Format, m.list.RootDir(entry), c.ID, entry.Selector(), entry.unboundHint()))
			continue
		}
		if err := m.writeEntry(ctx, entry, c, e); err != nil {
			warn(m.opts, fmt.Sprintf("mirror %s of %s under %s not written: %v", entry.Format, c.ID, m.list.RootDir(entry), err))
		}
	}
}

// echoesItsSource reports an event that came from the plan file the entry
// would write: a plan sync has brought .checkpoint up to date already, and
// mirroring it back would count a second checkpoint.
func echoesItsSource(entry Entry, e *ckpt.Event) bool {
	if e == nil || e.Type != ckpt.EventSynced && e.Type != ckpt.EventImported || entry.Format != (plan.Format{}).Name() {
		return false
	}
	var s struct {
		Source string `json:"source"`
	}
	_ = json.Unmarshal(e.Data, &s)
	return strings.HasPrefix(s.Source, plan.SourcePrefix)
}

func (m *Store) format(name string) (protocols.Format, error) {
	if m.opts.Formats != nil {
		return m.opts.Formats(name)
	}
	if name == agentcheckpoints.Name && m.opts.Now != nil {
		// Backups are named by the time, which CKPT_NOW fixes in scripts.
		return &agentcheckpoints.Format{Keep: 10, Now: m.opts.Now}, nil
	}
	return NewFormat(name)
}

// writeEntry writes c's files of one mirror entry; e is the event that
// made c, nil when not known.
func (m *Store) writeEntry(ctx context.Context, entry Entry, c *ckpt.Checkpoint, e *ckpt.Event) error {
	if climbsOut(entry.Root) {
		return entry.Check()
	}
	f, err := m.format(entry.Format)
	if err != nil {
		return err
	}
	root := m.list.RootDir(entry)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if isArchiveCopy(c) {
		// An archived copy made by takeover or restart: only agent-checkpoints (seed 002) names
		// such a file; the other systems keep one file per task, which is
		// the live checkpoint's.
		if entry.Format != agentcheckpoints.Name {
			return nil
		}
		path, err := archiveCopyPath(root, c)
		if err != nil {
			return err
		}
		data, err := f.Export(c)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return atomicfile.WriteFile(path, data, 0o644)
	}
	if af, ok := f.(*agentcheckpoints.Format); ok {
		co := m.inboxCheck(ctx, root, c, e)
		m.agentFiles.Lock()
		defer m.agentFiles.Unlock()
		return af.MirrorCoordinated(root, c, co)
	}
	if entry.Format != sitebuilder.Name {
		return f.Mirror(root, c)
	}
	return m.writeSitebuilder(ctx, f, entry, root, c)
}

// inboxCheck is the coordination a change brings to c's agent-checkpoints
// (seed 002) file: last_inbox_check is when ckpt last delivered the agent's
// messages into its context, the time of e when it is a delivery. Other
// changes carry the file's time (agentcheckpoints.Format.Mirror), except
// that a file not written yet takes the last delivery in c's history.
func (m *Store) inboxCheck(ctx context.Context, root string, c *ckpt.Checkpoint, e *ckpt.Event) agentcheckpoints.Coordination {
	if e != nil && e.Type == ckpt.EventDelivered {
		return agentcheckpoints.Coordination{InboxCheck: e.At}
	}
	name, err := agentcheckpoints.FileName(c)
	if err != nil {
		return agentcheckpoints.Coordination{}
	}
	if _, err := os.Stat(filepath.Join(root, agentcheckpoints.Dir, name)); !errors.Is(err, fs.ErrNotExist) {
		return agentcheckpoints.Coordination{}
	}
	return agentcheckpoints.Coordination{InboxCheck: lastDelivery(ctx, m.Store, c.ID, c.Rev)}
}

// lastDelivery is the time of the last delivered event of checkpoint id up
// to revision rev, zero when there is none or the history cannot be read.
func lastDelivery(ctx context.Context, st ckpt.Store, id string, rev int64) time.Time {
	const page = 500
	var last time.Time
	for from := int64(1); from <= rev; from += page {
		events, err := st.History(ctx, id, from, page)
		if err != nil {
			return time.Time{}
		}
		for _, ev := range events {
			if ev.Type == ckpt.EventDelivered && ev.Seq <= rev {
				last = ev.At
			}
		}
		if len(events) < page {
			break
		}
	}
	return last
}

// isArchiveCopy reports a checkpoint that is an archived snapshot of another
// one (takeover, restart), not archived work of its own.
func isArchiveCopy(c *ckpt.Checkpoint) bool {
	return c.Archived != nil && c.Archived.From != "" && c.Archived.From != c.ID
}

// archiveCopyPath is where agent-checkpoints (seed 002) keeps an archived agent file:
// agent_checkpoints/<live file stem>_<reason>_<unix>.json. Two archives of
// one checkpoint made in the same second (IDs ending _2, _3…) keep that
// ending, so each has a file of its own.
func archiveCopyPath(root string, c *ckpt.Checkpoint) (string, error) {
	live := *c
	live.ID = c.Archived.From
	name, err := agentcheckpoints.FileName(&live)
	if err != nil {
		return "", err
	}
	file := agentcheckpoints.ArchiveName(name, c.Archived.Reason, c.Archived.At)
	if base, err := ckpt.ArchiveName(c.Archived.From, c.Archived.Reason, c.Archived.At); err == nil {
		if n, ok := strings.CutPrefix(c.ID, base+"_"); ok && n != "" {
			file = strings.TrimSuffix(file, ".json") + "_" + n + ".json"
		}
	}
	return filepath.Join(root, agentcheckpoints.Dir, file), nil
}

// listFull returns the full state of every checkpoint f matches; damaged
// ones are left out (ckpt check reports them).
func listFull(ctx context.Context, st ckpt.Store, f ckpt.Filter) ([]*ckpt.Checkpoint, error) {
	sums, err := ckpt.ListAll(ctx, st, f)
	var damaged *ckpt.DamagedError
	if err != nil && !errors.As(err, &damaged) {
		return nil, err
	}
	out := make([]*ckpt.Checkpoint, 0, len(sums))
	for _, s := range sums {
		c, err := st.Get(ctx, s.ID, 0)
		switch {
		case errors.Is(err, ckpt.ErrNotFound), errors.Is(err, ckpt.ErrCorrupt):
			continue // deleted since the listing, or damaged
		case err != nil:
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// inStatus reports whether STATUS.md lists c: live work, and work archived
// as complete (its <agent>-<task>-complete.json), as the document's table
// lists a complete task beside the active ones.
func inStatus(c *ckpt.Checkpoint) bool {
	return c.Archived == nil || c.Archived.Reason == "complete" && !isArchiveCopy(c)
}

// sitebuilderRows returns the checkpoints entry selects, for STATUS.md.
func (m *Store) sitebuilderRows(ctx context.Context, entry Entry, c *ckpt.Checkpoint) []*ckpt.Checkpoint {
	f := ckpt.Filter{Prefix: entry.Prefix}
	if entry.ID != "" {
		f.Prefix = entry.ID
	}
	all, err := listFull(ctx, m.Store, f)
	if err != nil {
		warn(m.opts, fmt.Sprintf("STATUS.md lists only %s: listing the others: %v", c.ID, err))
		all = nil
	}
	out := make([]*ckpt.Checkpoint, 0, len(all)+1)
	seen := false
	for _, x := range all {
		if !entry.Selects(x.ID) {
			continue
		}
		if x.ID == c.ID {
			x, seen = c, true
		}
		if inStatus(x) {
			out = append(out, x)
		}
	}
	if !seen && inStatus(c) {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// writeSitebuilder writes sitebuilder's (seed 003) files for c: its checkpoint file (the
// format's Mirror), the "## Active Checkpoints" table of progress/STATUS.md
// over every checkpoint the entry selects, and, when the progress changed
// since the file was last written, the outbox line
// "@orchestrator: Task {task_id} progress: {percent}%" appended to
// messages/outbox-<agent>.md.
func (m *Store) writeSitebuilder(ctx context.Context, f protocols.Format, entry Entry, root string, c *ckpt.Checkpoint) error {
	name, err := sitebuilder.FileName(c)
	if err != nil {
		return err
	}
	live := filepath.Join(root, sitebuilder.Dir, name)
	oldLine, hadFile := "", false
	if data, err := os.ReadFile(live); err == nil {
		if imp, err := f.Import(live, data); err == nil {
			imp.State.ID = c.ID
			oldLine, hadFile = sitebuilder.OutboxLine(imp.State), true
		}
	}
	if err := f.Mirror(root, c); err != nil {
		return err
	}
	statusPath := filepath.Join(root, "progress", "STATUS.md")
	if err := writeStatusSection(statusPath, render.StatusMarkdown(statusRows(m.sitebuilderRows(ctx, entry, c)), m.now(), SitebuilderThresholds, process.Alive)); err != nil {
		return fmt.Errorf("checkpoint file written, but %s not: %w", statusPath, err)
	}
	line := sitebuilder.OutboxLine(c)
	if hadFile && line == oldLine || !hadFile && c.Progress.Percent <= 0 {
		return nil
	}
	outbox := filepath.Join(root, "messages", "outbox-"+outboxAgent(c)+".md")
	if err := appendLine(outbox, line); err != nil {
		return fmt.Errorf("checkpoint file written, but the outbox line not: %w", err)
	}
	return nil
}
