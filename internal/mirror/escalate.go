package mirror

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/atomicfile"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/internal/process"
	"github.com/ckpt-dev/ckpt/internal/render"
	"github.com/ckpt-dev/ckpt/protocols/agentcheckpoints"
	"github.com/ckpt-dev/ckpt/protocols/sitebuilder"
)

// Seed 002's stale thresholds, in whole minutes past the last checkpoint
// (its check_stale_agents: AGE_MINUTES -gt 30 warns, -gt 60 is a crash).
const (
	SeedWarnMinutes  = render.AgentCheckWarnMinutes
	SeedStaleMinutes = render.AgentCheckStaleMinutes
)

// SitebuilderThresholds are sitebuilder's (seed 003) supervisor thresholds: warning
// after 10 minutes without a heartbeat, stalled after 30. STATUS.md is
// judged with them.
var SitebuilderThresholds = ckpt.Thresholds{Warn: 10 * time.Minute, Stale: 30 * time.Minute}

// EpicReadme is agent-checkpoints' (seed 002) epic file, in the mirror's root.
const EpicReadme = "EPIC_README.md"

// InboxPath is where agent-checkpoints' (seed 002) Primary writes to the agent whose
// checkpoint file is name (secondary_a.json): agent_comms/primary_to_<stem>.md,
// as the document's projects name their message files.
func InboxPath(root, name string) string {
	return filepath.Join(root, "agent_comms", "primary_to_"+strings.TrimSuffix(name, ".json")+".md")
}

// Escalate writes the seeds' own escalations as of now, for the mirrors
// configured, as the seeds' Primary and supervisor would: for agent-checkpoints (seed 002)
// (agent-checkpoints) the "CHECKPOINT WARNING" message in an agent's inbox
// once it has been silent more than 30 whole minutes, and its
// "<agent>: STALE (likely crashed)" line in EPIC_README.md past 60; for
// sitebuilder (seed 003) (sitebuilder) STATUS.md rewritten, so a row turns "(warning)"
// at 10 minutes and "(stalled)" at 30 without any write to the store.
// Each is written once per silence (a message and a line name the last
// checkpoint they are about). It returns how many files it wrote; failures
// are warned (Options.Warn) and do not stop the others. ckpt monitor and
// ckpt serve call it on every look.
func (m *Store) Escalate(ctx context.Context, now time.Time) int {
	wrote := 0
	for _, entry := range m.entries {
		if entry.Format != agentcheckpoints.Name && entry.Format != sitebuilder.Name || climbsOut(entry.Root) {
			continue
		}
		f := ckpt.Filter{Prefix: entry.Prefix}
		if entry.ID != "" {
			f.Prefix = entry.ID
		}
		all, err := listFull(ctx, m.Store, f)
		if err != nil {
			warn(m.opts, fmt.Sprintf("escalations of mirror %s under %s not written: %v", entry.Format, m.list.RootDir(entry), err))
			continue
		}
		var live, rows []*ckpt.Checkpoint
		for _, c := range all {
			if !entry.Selects(c.ID) {
				continue
			}
			if c.Archived == nil {
				live = append(live, c)
			}
			if inStatus(c) {
				rows = append(rows, c)
			}
		}
		root := m.list.RootDir(entry)
		if entry.Format == sitebuilder.Name {
			if len(live) == 0 {
				continue
			}
			path := filepath.Join(root, "progress", "STATUS.md")
			old, _ := os.ReadFile(path)
			if err := writeStatusSection(path, render.StatusMarkdown(statusRows(rows), now, SitebuilderThresholds, process.Alive)); err != nil {
				warn(m.opts, fmt.Sprintf("%s not written: %v", path, err))
			} else if now2, _ := os.ReadFile(path); string(now2) != string(old) {
				wrote++
			}
			continue
		}
		for _, c := range live {
			n, epic, err := escalateAgent(root, c, now)
			wrote += n
			if err != nil {
				warn(m.opts, fmt.Sprintf("escalation for %s under %s not written: %v", c.ID, root, err))
			}
			if epic {
				wrote += m.recordEpicUpdate(root, c, now)
			}
		}
	}
	return wrote
}

// silentMinutes is agent-checkpoints' (seed 002) AGE_MINUTES: whole minutes since the file's
// last_checkpoint (the later of the last change and the last beat).
func silentMinutes(c *ckpt.Checkpoint, now time.Time) (int, time.Time) {
	s := c.Summary()
	last := s.LastSeen()
	return int(now.Sub(last) / time.Minute), last
}

// recordEpicUpdate rewrites c's agent file with last_epic_readme_update
// now, the time its EPIC_README.md line was written; it returns the files
// written (0 or 1).
func (m *Store) recordEpicUpdate(root string, c *ckpt.Checkpoint, now time.Time) int {
	f, err := m.format(agentcheckpoints.Name)
	af, ok := f.(*agentcheckpoints.Format)
	if err != nil || !ok {
		return 0
	}
	m.agentFiles.Lock()
	err = af.MirrorCoordinated(root, c, agentcheckpoints.Coordination{EpicReadmeUpdate: now})
	m.agentFiles.Unlock()
	if err != nil {
		warn(m.opts, fmt.Sprintf("EPIC_README.md updated for %s, but its last_epic_readme_update not written: %v", c.ID, err))
		return 0
	}
	return 1
}

// escalateAgent writes agent-checkpoints' (seed 002) warning message and
// stale line for c; epic reports that the stale line was written now.
func escalateAgent(root string, c *ckpt.Checkpoint, now time.Time) (wrote int, epic bool, err error) {
	if c.Status.Final() || c.Status == ckpt.StatusPending || strings.EqualFold(c.Agent.Type, "primary") {
		return 0, false, nil // the Primary checks the secondaries (secondary_*.json), not itself
	}
	age, last := silentMinutes(c, now)
	if age <= SeedWarnMinutes {
		return 0, false, nil
	}
	name, err := agentcheckpoints.FileName(c)
	if err != nil {
		return 0, false, err
	}
	agent := c.Agent.Label()
	if agent == "" {
		agent = strings.TrimSuffix(name, ".json")
	}
	marker := fmt.Sprintf("<!-- ckpt: %s silent since %s -->", c.ID, last.UTC().Format(time.RFC3339))
	if age > SeedStaleMinutes {
		line := agent + ": STALE (likely crashed)"
		ok, err := appendOnce(filepath.Join(root, EpicReadme), marker, "\n"+line+" — no checkpoint since "+last.UTC().Format("2006-01-02 15:04")+" UTC ("+fmt.Sprint(age)+" min) "+marker+"\n")
		if err != nil {
			return wrote, false, err
		}
		if ok {
			wrote, epic = wrote+1, true
		}
	}
	ok, err := appendOnce(InboxPath(root, name), marker, warningMessage(c, agent, last, now, marker, InboxPath(root, name)))
	if ok {
		wrote++
	}
	return wrote, epic, err
}

// messageHeading is compiled on first use, not in every ckpt process.
var messageHeading = lazyregexp.New(`(?m)^## Message (\d+)`)

// warningMessage is the document's 30-minute message, numbered after the
// messages the inbox holds.
func warningMessage(c *ckpt.Checkpoint, agent string, last, now time.Time, marker, inbox string) string {
	n := 1
	if data, err := os.ReadFile(inbox); err == nil {
		n += len(messageHeading.Get().FindAll(data, -1))
	}
	interval := c.Heartbeat.Interval.D()
	if interval <= 0 {
		interval = 15 * time.Minute
	}
	age := int(now.Sub(last) / time.Minute)
	return fmt.Sprintf(`
## Message %d (%s) ⏳ UNREAD
**Subject:** CHECKPOINT WARNING - No Update in 30 Minutes
**Action:** Please update your checkpoint and confirm you're still working
**Details:** Your last checkpoint was at %s (%d minutes ago)
         Expected checkpoint every %d minutes
         Are you still actively working?
**Next:** Reply "Still working" and update checkpoint ASAP
**Acknowledge:** Reply immediately
%s
`, n, now.UTC().Format("2006-01-02 15:04"), last.UTC().Format("15:04"), age, int(interval/time.Minute), marker)
}

// appendOnce appends text to the file at path unless it already holds
// marker; it reports whether it wrote. The file is rewritten atomically.
func appendOnce(path, marker, text string) (bool, error) {
	old, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return false, err
	}
	if strings.Contains(string(old), marker) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	body := string(old)
	if body == "" {
		text = strings.TrimPrefix(text, "\n")
	} else if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return true, atomicfile.WriteFile(path, []byte(body+text), 0o644)
}

// statusRows are the rows of STATUS.md: each checkpoint with the progress
// its checkpoint file says (sitebuilder.FilePercent), so the table, the
// file and the outbox line show one progress.
func statusRows(cs []*ckpt.Checkpoint) []*ckpt.Checkpoint {
	out := make([]*ckpt.Checkpoint, len(cs))
	for i, c := range cs {
		cc := *c
		cc.Progress.Percent = sitebuilder.FilePercent(c)
		out[i] = &cc
	}
	return out
}
