package sitebuilder

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"

	ckpt "github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/jsondoc"
	"github.com/ckpt-dev/ckpt/internal/lazyregexp"
	"github.com/ckpt-dev/ckpt/protocols/internal/mdscan"
)

// StatusRow is one agent's row of a STATUS.md aggregate: sitebuilder's (seed 003)
// "## Active Checkpoints" table (Agent, Task, Progress, Last Update, Status)
// or the "## Active Agents" table real orchestrators write (Agent, Status,
// Current Task, Last Checkpoint). Cells are kept as written, without
// Markdown emphasis and leading status emoji; an empty or "—" cell is "".
type StatusRow struct {
	Agent     string // "migration", or "Migration" from "Migration (Riley)"
	AgentName string // "Riley" from "Migration (Riley)"
	Task      string // the Task or Current Task cell
	// Progress is the Progress cell ("65%"); Percent its value, nil when the
	// table has no such column or the cell is not a percentage.
	Progress string
	Percent  *float64
	// LastUpdate is the Last Update / Last Checkpoint cell ("2 min ago",
	// "2025-12-09T14:00:00Z"); LastUpdateAt its time when it is a timestamp.
	LastUpdate   string
	LastUpdateAt *time.Time
	// StatusText is the Status cell; Status the ckpt status it maps onto.
	StatusText string
	Status     ckpt.Status
}

// Regular expressions are compiled on first use, not at start-up: every
// ckpt process links this package, and most never use them.
var (
	tableLine     = lazyregexp.New(`^\s*\|.*\|\s*$`)
	separatorCell = lazyregexp.New(`^\s*:?-+:?\s*$`)
	agentAndName  = lazyregexp.New(`^(.*?)\s*\(([^()]+)\)$`)
)

// ParseStatusMarkdown reads the agent rows of a STATUS.md aggregate: the
// tables under a heading that says "Active Checkpoints" or "Active Agents".
// It is lenient: columns are found by their header names in any order,
// unknown status words are mapped by their parts and listed in the warnings,
// and tables inside code fences are ignored. It fails only when there is no
// such table.
func ParseStatusMarkdown(md []byte) ([]StatusRow, []string, error) {
	var (
		n       jsondoc.Notes
		rows    []StatusRow
		inTable bool // under an agents heading
		header  map[string]int
		tables  int
		guessed = map[string]bool{}
	)
	for l := range mdscan.Lines(md) {
		if l.Fenced {
			continue
		}
		line, trimmed := l.Text, l.Trimmed
		if _, text, ok := mdscan.Heading(line); ok {
			h := strings.ToLower(text)
			inTable = strings.Contains(h, "active checkpoints") || strings.Contains(h, "active agents")
			header = nil
			continue
		}
		if !inTable {
			continue
		}
		if !tableLine.Get().MatchString(line) {
			if trimmed != "" {
				header = nil
			}
			continue
		}
		cells := splitRow(trimmed)
		if header == nil {
			header = map[string]int{}
			for i, c := range cells {
				header[strings.ToLower(cleanCell(c))] = i
			}
			tables++
			if col(header, "agent") < 0 {
				n.Add("a table under an agents heading has no Agent column: its rows are skipped")
			}
			continue
		}
		if isSeparator(cells) {
			continue
		}
		if r, ok := readRow(cells, header, &n, guessed); ok {
			rows = append(rows, r)
		}
	}
	if tables == 0 {
		return nil, n, errors.New(`no "## Active Checkpoints" (or "## Active Agents") table found: STATUS.md lists agents in a table with Agent, Task, Progress, Last Update and Status columns`)
	}
	return rows, n, nil
}

// col returns the index of the first header named like one of names, or -1.
func col(header map[string]int, names ...string) int {
	for _, name := range names {
		if i, ok := header[name]; ok {
			return i
		}
	}
	return -1
}

func readRow(cells []string, header map[string]int, n *jsondoc.Notes, guessed map[string]bool) (StatusRow, bool) {
	cell := func(names ...string) string {
		if i := col(header, names...); i >= 0 && i < len(cells) {
			return cleanCell(cells[i])
		}
		return ""
	}
	ai := col(header, "agent")
	if ai < 0 {
		return StatusRow{}, false
	}
	var r StatusRow
	r.Agent = cell("agent")
	if r.Agent == "" {
		return StatusRow{}, false
	}
	if m := agentAndName.Get().FindStringSubmatch(r.Agent); m != nil && m[1] != "" {
		r.Agent, r.AgentName = m[1], m[2]
	}
	r.Task = cell("task", "current task", "task id")
	r.Progress = cell("progress")
	if r.Progress != "" {
		if v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(r.Progress, "~"), "%")), 64); err == nil {
			r.Percent = &v
		} else {
			n.Add("agent %s: progress %q is not a percentage", r.Agent, r.Progress)
		}
	}
	r.LastUpdate = cell("last update", "last checkpoint", "last updated", "last beat", "updated")
	if t, _, ok := jsondoc.ParseTime(r.LastUpdate); ok {
		r.LastUpdateAt = &t
	}
	r.StatusText = cell("status")
	if r.StatusText == "" {
		r.Status = ckpt.StatusPending
		n.Add("agent %s: no status: pending assumed", r.Agent)
		return r, true
	}
	s, guess := jsondoc.StatusFromWord(r.StatusText)
	r.Status = s
	if guess && !guessed[strings.ToLower(r.StatusText)] {
		guessed[strings.ToLower(r.StatusText)] = true
		n.Add("status %q is not a seed 003 status: read as %s", r.StatusText, s)
	}
	return r, true
}

// splitRow splits "| a | b |" into its cells; "\|" stays inside a cell.
func splitRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, cur.String())
}

func isSeparator(cells []string) bool {
	for _, c := range cells {
		if !separatorCell.Get().MatchString(c) {
			return false
		}
	}
	return true
}

// cleanCell removes Markdown emphasis, code marks and leading status emoji,
// and reads a dash alone as an empty cell.
func cleanCell(s string) string {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
	s = strings.TrimLeftFunc(s, func(r rune) bool {
		return unicode.Is(unicode.So, r) || r == 0xFE0F || r == 0x200D || unicode.IsSpace(r)
	})
	s = strings.TrimSpace(strings.Trim(s, "*_"))
	switch s {
	case "—", "-", "–", "n/a", "N/A":
		return ""
	}
	return s
}
