package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/protocols"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/ccc"
	"github.com/ckpt-dev/ckpt/protocols/plan"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
	"github.com/ckpt-dev/ckpt/protocols/superpowers"
	"github.com/ckpt-dev/ckpt/render"
)

// Seed-format mirrors: a list of {format, root, selector} entries in the
// store directory (mirrors.json). The store every command opens is wrapped
// in a mirroringStore, so every write path (CLI verbs, hooks, MCP) rewrites
// the seed-format files of the checkpoints it changes, after the store has
// released the checkpoint's lock, best effort: a mirror that fails prints a
// warning and never fails the write (ARCHITECTURE's write order).

// formatNames lists the seed formats by name, in seed order.
var formatNames = []string{superpowers.Name, ccc.Name, agentcheckpoints.Name, sitebuilder.Name, plan.Format{}.Name()}

// newFormat returns the format called name with its document's settings,
// or an error wrapping ckpt.ErrInvalid that lists the names.
func newFormat(name string) (protocols.Format, error) {
	switch name {
	case superpowers.Name:
		return superpowers.New(), nil
	case ccc.Name:
		return ccc.New(), nil
	case agentcheckpoints.Name:
		return agentcheckpoints.New(), nil
	case sitebuilder.Name:
		return sitebuilder.New(), nil
	case plan.Format{}.Name():
		return plan.Format{}, nil
	}
	return nil, fmt.Errorf("%w: unknown format %q: use one of %s", ckpt.ErrInvalid, name, strings.Join(formatNames, ", "))
}

// MirrorsFile is the name of the mirror list in the store directory.
const MirrorsFile = "mirrors.json"

// mirrorsVersion is the version of mirrors.json this code writes.
const mirrorsVersion = 1

// mirrorEntry is one mirror: checkpoints it selects are written in Format
// under Root after every change.
type mirrorEntry struct {
	Format string `json:"format"`
	// Root is the directory the seed system's files live under: relative to
	// the project directory (the store's parent) or absolute.
	Root string `json:"root"`
	// ID selects one checkpoint; Prefix, when ID is empty, every checkpoint
	// whose ID starts with it ("" selects every checkpoint).
	ID     string `json:"id,omitempty"`
	Prefix string `json:"prefix,omitempty"`
}

// selects reports whether the entry mirrors checkpoint id.
func (m mirrorEntry) selects(id string) bool {
	if m.ID != "" {
		return id == m.ID
	}
	return strings.HasPrefix(id, m.Prefix)
}

// selector describes what the entry selects, for listings.
func (m mirrorEntry) selector() string {
	switch {
	case m.ID != "":
		return "id " + m.ID
	case m.Prefix != "":
		return "prefix " + m.Prefix
	}
	return "every checkpoint"
}

// rootDir is the entry's root as an absolute path.
func (m mirrorEntry) rootDir(storeDir string) string {
	if filepath.IsAbs(m.Root) {
		return filepath.Clean(m.Root)
	}
	return filepath.Join(filepath.Dir(storeDir), filepath.FromSlash(m.Root))
}

// mirrorConfig is mirrors.json.
type mirrorConfig struct {
	Version int           `json:"version"`
	Mirrors []mirrorEntry `json:"mirrors"`
}

// readMirrors reads the mirror list of the store in storeDir. A missing file
// is an empty list; a damaged one is an error that says how to mend it.
func readMirrors(storeDir string) (mirrorConfig, error) {
	path := filepath.Join(storeDir, MirrorsFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return mirrorConfig{Version: mirrorsVersion}, nil
	}
	if err != nil {
		return mirrorConfig{}, fmt.Errorf("reading the mirror list: %w", err)
	}
	cfg, err := decodeMirrors(data)
	if err != nil {
		return mirrorConfig{}, fmt.Errorf("%s: %w: fix the file by hand, or remove it and add the mirrors again with ckpt mirror add", path, err)
	}
	return cfg, nil
}

// decodeMirrors parses and checks mirrors.json content. Errors wrap
// ckpt.ErrInvalid.
func decodeMirrors(data []byte) (mirrorConfig, error) {
	var cfg mirrorConfig
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return mirrorConfig{}, fmt.Errorf("%w: not a mirror list: %v", ckpt.ErrInvalid, err)
	}
	if cfg.Version != mirrorsVersion {
		return mirrorConfig{}, fmt.Errorf("%w: mirror list version %d: this ckpt reads version %d", ckpt.ErrInvalid, cfg.Version, mirrorsVersion)
	}
	for i, m := range cfg.Mirrors {
		if err := m.check(); err != nil {
			return mirrorConfig{}, fmt.Errorf("mirror %d: %w", i+1, err)
		}
	}
	return cfg, nil
}

// check validates an entry: a known format, a root, a valid ID.
func (m mirrorEntry) check() error {
	if _, err := newFormat(m.Format); err != nil {
		return err
	}
	if strings.TrimSpace(m.Root) == "" {
		return fmt.Errorf("%w: mirror of %s has no root directory", ckpt.ErrInvalid, m.Format)
	}
	if m.ID != "" && m.Prefix != "" {
		return fmt.Errorf("%w: mirror of %s has both an id and a prefix: give one", ckpt.ErrInvalid, m.Format)
	}
	if m.ID != "" {
		return ckpt.ValidateID(m.ID)
	}
	return nil
}

// editMirrors changes the mirror list under the store's mirror lock, so
// two processes editing it at once do not lose an entry, and writes it
// durably.
func editMirrors(storeDir string, edit func(*mirrorConfig) error) (mirrorConfig, error) {
	lock := flock.New(filepath.Join(storeDir, "mirrors.lock"))
	if err := lock.Lock(); err != nil {
		return mirrorConfig{}, fmt.Errorf("locking the mirror list: %w", err)
	}
	defer lock.Unlock()
	cfg, err := readMirrors(storeDir)
	if err != nil {
		return mirrorConfig{}, err
	}
	if err := edit(&cfg); err != nil {
		return mirrorConfig{}, err
	}
	if cfg.Mirrors == nil {
		cfg.Mirrors = []mirrorEntry{}
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return mirrorConfig{}, err
	}
	if err := atomicfile.WriteFile(filepath.Join(storeDir, MirrorsFile), append(data, '\n'), 0o644); err != nil {
		return mirrorConfig{}, fmt.Errorf("writing the mirror list: %w", err)
	}
	return cfg, nil
}

// mirroringStore is a ckpt.Store that writes seed-format mirrors after every
// change it makes. It is safe for concurrent use if the store it wraps is.
type mirroringStore struct {
	ckpt.Store
	storeDir string
	entries  []mirrorEntry
	warn     io.Writer
	now      func() time.Time
	// formats, when set, replaces newFormat (tests shorten lock timeouts).
	formats func(name string) (protocols.Format, error)
}

// withMirrors wraps st, the store in storeDir, in a mirroringStore when the
// store has mirrors; without any it returns st itself, so a store without
// mirrors pays one failed file open per command and nothing per write. A
// damaged mirror list is reported on warn and leaves st unwrapped.
func withMirrors(st ckpt.Store, storeDir string, warn io.Writer, now func() time.Time) ckpt.Store {
	cfg, err := readMirrors(storeDir)
	if err != nil {
		printWarning(warn, "mirrors not written: "+err.Error())
		return st
	}
	if len(cfg.Mirrors) == 0 {
		return st
	}
	return &mirroringStore{Store: st, storeDir: storeDir, entries: cfg.Mirrors, warn: warn, now: now}
}

// Append appends through the wrapped store and then, for a change that was
// made (not a replayed key), writes the checkpoint's mirrors.
func (m *mirroringStore) Append(ctx context.Context, id string, e ckpt.Event, opts ckpt.AppendOptions) (ckpt.AppendResult, error) {
	res, err := m.Store.Append(ctx, id, e, opts)
	if err != nil || res.Replayed || res.State == nil {
		return res, err
	}
	m.mirror(ctx, res.State, &res.Event)
	return res, nil
}

// Beat records the heartbeat and rewrites the mirrors, whose files carry
// the last sign of life the seed systems' own stale checks read (seed 002's
// last_checkpoint, seed 003's heartbeat.last_beat).
func (m *mirroringStore) Beat(ctx context.Context, id string, sig ckpt.Signal) error {
	if err := m.Store.Beat(ctx, id, sig); err != nil {
		return err
	}
	if !m.selects(id) {
		return nil
	}
	c, err := m.Store.Get(ctx, id, 0)
	if err != nil {
		printWarning(m.warn, fmt.Sprintf("mirror of %s not written: reading it after the heartbeat: %v", id, err))
		return nil
	}
	m.mirror(ctx, c, nil)
	return nil
}

func (m *mirroringStore) selects(id string) bool {
	for _, e := range m.entries {
		if e.selects(id) {
			return true
		}
	}
	return false
}

// mirror writes c in every format whose entry selects it; e is the event
// that made c, nil for a heartbeat or an explicit sync.
func (m *mirroringStore) mirror(ctx context.Context, c *ckpt.Checkpoint, e *ckpt.Event) {
	for _, entry := range m.entries {
		if !entry.selects(c.ID) || echoesItsSource(entry, e) {
			continue
		}
		if err := m.writeEntry(ctx, entry, c); err != nil {
			printWarning(m.warn, fmt.Sprintf("mirror %s of %s under %s not written: %v", entry.Format, c.ID, entry.rootDir(m.storeDir), err))
		}
	}
}

// echoesItsSource reports an event that came from the plan file the entry
// would write: a plan sync has brought .checkpoint up to date already, and
// mirroring it back would count a second checkpoint.
func echoesItsSource(entry mirrorEntry, e *ckpt.Event) bool {
	if e == nil || e.Type != ckpt.EventSynced && e.Type != ckpt.EventImported || entry.Format != (plan.Format{}).Name() {
		return false
	}
	var s struct {
		Source string `json:"source"`
	}
	_ = json.Unmarshal(e.Data, &s)
	return strings.HasPrefix(s.Source, plan.SourcePrefix)
}

func (m *mirroringStore) format(name string) (protocols.Format, error) {
	if m.formats != nil {
		return m.formats(name)
	}
	if name == agentcheckpoints.Name && m.now != nil {
		// Backups are named by the time, which CKPT_NOW fixes in scripts.
		return &agentcheckpoints.Format{Keep: 10, Now: m.now}, nil
	}
	return newFormat(name)
}

// writeEntry writes c's files of one mirror entry.
func (m *mirroringStore) writeEntry(ctx context.Context, entry mirrorEntry, c *ckpt.Checkpoint) error {
	f, err := m.format(entry.Format)
	if err != nil {
		return err
	}
	root := entry.rootDir(m.storeDir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if isArchiveCopy(c) {
		// An archived copy made by takeover or restart: only seed 002 names
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
	if entry.Format != sitebuilder.Name {
		return f.Mirror(root, c)
	}
	return m.writeSitebuilder(ctx, f, entry, root, c)
}

// isArchiveCopy reports a checkpoint that is an archived snapshot of another
// one (takeover, restart), not archived work of its own.
func isArchiveCopy(c *ckpt.Checkpoint) bool {
	return c.Archived != nil && c.Archived.From != "" && c.Archived.From != c.ID
}

// archiveCopyPath is where seed 002 keeps an archived agent file:
// agent_checkpoints/<live file stem>_<reason>_<unix>.json.
func archiveCopyPath(root string, c *ckpt.Checkpoint) (string, error) {
	live := *c
	live.ID = c.Archived.From
	name, err := agentcheckpoints.FileName(&live)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, agentcheckpoints.Dir, agentcheckpoints.ArchiveName(name, c.Archived.Reason, c.Archived.At)), nil
}

// sitebuilderRows returns the checkpoints entry selects, for STATUS.md.
func (m *mirroringStore) sitebuilderRows(ctx context.Context, entry mirrorEntry, c *ckpt.Checkpoint) []*ckpt.Checkpoint {
	f := ckpt.Filter{Prefix: entry.Prefix}
	if entry.ID != "" {
		f.Prefix = entry.ID
	}
	all, err := listFull(ctx, m.Store, f)
	if err != nil {
		printWarning(m.warn, fmt.Sprintf("STATUS.md lists only %s: listing the others: %v", c.ID, err))
		all = nil
	}
	out := make([]*ckpt.Checkpoint, 0, len(all)+1)
	seen := false
	for _, x := range all {
		if !entry.selects(x.ID) {
			continue
		}
		if x.ID == c.ID {
			x, seen = c, true
		}
		if x.Archived == nil {
			out = append(out, x)
		}
	}
	if !seen && c.Archived == nil {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// writeSitebuilder writes seed 003's files for c: its checkpoint file (the
// format's Mirror), the "## Active Checkpoints" table of progress/STATUS.md
// over every checkpoint the entry selects, and, when the progress changed
// since the file was last written, the outbox line
// "@orchestrator: Task {task_id} progress: {percent}%" appended to
// messages/outbox-<agent>.md.
func (m *mirroringStore) writeSitebuilder(ctx context.Context, f protocols.Format, entry mirrorEntry, root string, c *ckpt.Checkpoint) error {
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
	now := time.Now().UTC()
	if m.now != nil {
		now = m.now()
	}
	statusPath := filepath.Join(root, "progress", "STATUS.md")
	if err := writeStatusSection(statusPath, render.StatusMarkdown(m.sitebuilderRows(ctx, entry, c), now, ckpt.Thresholds{})); err != nil {
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

// outboxAgent names c's outbox: messages/outbox-<agent>.md, the agent being
// the agent ID, else its name, else the last segment of c's ID, reduced to
// ID characters so it stays one file in messages/.
func outboxAgent(c *ckpt.Checkpoint) string {
	name := c.Agent.ID
	if name == "" {
		name = c.Agent.Name
	}
	if name == "" {
		name = c.ID[strings.LastIndexByte(c.ID, '/')+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" {
		return "agent"
	}
	return out
}

// appendLine appends line to the file at path durably, creating it and
// its directory if need be.
func appendLine(path, line string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// statusSections are the sections of STATUS.md that ckpt writes; the rest
// of the file belongs to the orchestrator and is kept as it is.
var statusSections = []string{"## Active Checkpoints", "## Partially Complete"}

// writeStatusSection writes rendered (a whole STATUS.md from
// render.StatusMarkdown) to path: as it is when there is no file yet, else
// by replacing only the file's "## Active Checkpoints" and "## Partially
// Complete" sections with the rendered ones, keeping every other line.
func writeStatusSection(path, rendered string) error {
	old, err := os.ReadFile(path)
	var out string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		out = rendered
	case err != nil:
		return err
	default:
		out = mergeStatusSections(string(old), rendered)
	}
	if string(old) == out {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, []byte(out), 0o644)
}

// mergeStatusSections replaces ckpt's sections of the existing STATUS.md
// with those of rendered, where the first of them stood, or appends them.
// A section runs from its heading to the next heading or "---" rule;
// headings inside code fences do not count.
func mergeStatusSections(existing, rendered string) string {
	i := strings.Index(rendered, statusSections[0])
	if i < 0 {
		return existing
	}
	fresh := strings.TrimRight(rendered[i:], "\n")
	nl := "\n"
	if strings.Contains(existing, "\r\n") {
		// Keep the file's line endings (real STATUS.md files use CRLF).
		nl = "\r\n"
		fresh = strings.ReplaceAll(fresh, "\n", nl)
	}
	lines := strings.SplitAfter(existing, "\n")
	var kept []string
	at, fence, skipping := -1, "", false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if run := fenceRun(t); fence == "" && run != "" {
			fence = run
		} else if run != "" && run[0] == fence[0] && len(run) >= len(fence) && strings.TrimSpace(t[len(run):]) == "" {
			fence = ""
			if !skipping {
				kept = append(kept, l)
			}
			continue
		}
		if fence == "" {
			switch {
			case isStatusSection(t):
				if at < 0 {
					at = len(kept)
				}
				skipping = true
				continue
			case strings.HasPrefix(t, "#") || t == "---":
				skipping = false
			}
		}
		if !skipping {
			kept = append(kept, l)
		}
	}
	if at < 0 {
		body := strings.TrimRight(existing, "\r\n")
		if body == "" {
			return fresh + nl
		}
		if fence != "" {
			// A code block left open would swallow the table (and the next
			// write would add another): close it.
			body += nl + fence
		}
		return body + nl + nl + "---" + nl + nl + fresh + nl
	}
	head := strings.Join(kept[:at], "")
	tail := strings.TrimLeft(strings.Join(kept[at:], ""), "\r\n")
	if head != "" && !strings.HasSuffix(head, "\n") {
		head += nl
	}
	if tail == "" {
		return head + fresh + nl
	}
	return head + fresh + nl + nl + tail
}

// fenceRun returns the run of three or more '`' or '~' that opens or
// closes a Markdown code fence on the trimmed line t, or "".
func fenceRun(t string) string {
	if len(t) < 3 || t[0] != '`' && t[0] != '~' {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}

func isStatusSection(line string) bool {
	for _, s := range statusSections {
		if strings.EqualFold(line, s) {
			return true
		}
	}
	return false
}
