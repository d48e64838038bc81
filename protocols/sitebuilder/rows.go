package sitebuilder

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/protocols"
)

// ImportStatusMarkdown reads a STATUS.md aggregate (ParseStatusMarkdown)
// as one checkpoint per agent row (RowCheckpoint). Rows that suggest the
// same ID get -2, -3, … appended; the table's own notes are the first
// row's warnings.
func ImportStatusMarkdown(md []byte) ([]protocols.Imported, error) {
	rows, notes, err := ParseStatusMarkdown(md)
	if err != nil {
		return nil, err
	}
	out := make([]protocols.Imported, 0, len(rows))
	seen := map[string]int{}
	for i, row := range rows {
		it := RowCheckpoint(row)
		if n := seen[it.ID]; n > 0 {
			it.ID = fmt.Sprintf("%s-%d", it.ID, n+1)
		}
		seen[it.ID]++
		if i == 0 {
			it.Warnings = append(notes, it.Warnings...)
		}
		out = append(out, it)
	}
	return out, nil
}

// RowCheckpoint makes a checkpoint of one STATUS.md row: agent, task,
// progress and status are all a row knows; the row itself is kept in the
// meta key sitebuilder_status_row. Its suggested ID is <agent>-<task>.
func RowCheckpoint(row StatusRow) protocols.Imported {
	agent := IDPart(row.Agent)
	task := IDPart(row.Task)
	id := agent
	if task != "" {
		id = agent + "-" + task
	}
	if id == "" {
		id = "status-row"
	}
	c := &ckpt.Checkpoint{
		ID:        id,
		Agent:     ckpt.Agent{ID: strings.ToLower(row.Agent), Name: row.AgentName},
		Title:     row.Task,
		Status:    row.Status,
		Resume:    ckpt.Resume{Resumable: true},
		Heartbeat: ckpt.Heartbeat{Interval: ckpt.Duration(DefaultInterval)},
	}
	if !c.Status.Valid() {
		c.Status = ckpt.StatusPending
	}
	if row.Percent != nil && !math.IsNaN(*row.Percent) {
		done := int(math.Round(min(max(*row.Percent, 0), 100)))
		c.Progress = ckpt.Progress{Done: done, Total: 100}
	}
	raw, _ := json.Marshal(map[string]any{"agent": row.Agent, "agent_name": row.AgentName, "task": row.Task, "progress": row.Progress, "last_update": row.LastUpdate, "status": row.StatusText})
	c.Meta = map[string]json.RawMessage{"sitebuilder_status_row": raw}
	w := []string{fmt.Sprintf("STATUS.md row %q: only agent, task, progress and status are known; suggested ID %q", row.Agent, id)}
	return protocols.Imported{ID: id, State: c, Warnings: w}
}

// IDPart reduces text to an ID segment: lower case, runs of other
// characters as one '-', at most 60 bytes; "" when nothing is left.
func IDPart(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := r < 128 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.')
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-.")
	if len(out) > 60 {
		out = strings.Trim(out[:60], "-.")
	}
	return out
}
