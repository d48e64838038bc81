package render

import (
	"fmt"
	"io"
	"sort"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Seed 002's check_stale_agents thresholds, in whole minutes since the last
// checkpoint: more than 30 warns, more than 60 is a likely crash.
const (
	AgentCheckWarnMinutes  = 30
	AgentCheckStaleMinutes = 60
)

// AgentCheckLines writes agent-checkpoints' (seed 002) check_stale_agents lines for the live
// checkpoints of sums, by ID, as the document's script prints them:
//
//	❌ Secondary-A: STALE (75 min) - Likely crashed
//	⚠️ Secondary-B: WARNING (42 min) - May be slow
//	✅ Secondary-C: ACTIVE (3 min ago)
//
// The age is AGE_MINUTES, the whole minutes since the later of the last
// update and the last beat (the file's last_checkpoint). It returns how
// many lines were stale and how many warnings.
func AgentCheckLines(w io.Writer, sums []ckpt.Summary, now time.Time) (stale, warn int, err error) {
	sort.Slice(sums, func(i, j int) bool { return sums[i].ID < sums[j].ID })
	for i := range sums {
		s := &sums[i]
		if !s.Status.Live() || s.Archived != nil {
			continue
		}
		name := s.Agent.Label()
		if name == "" {
			name = s.ID
		}
		age := int(now.Sub(s.LastSeen()) / time.Minute)
		var line string
		switch {
		case age > AgentCheckStaleMinutes:
			stale++
			line = fmt.Sprintf("❌ %s: STALE (%d min) - Likely crashed", name, age)
		case age > AgentCheckWarnMinutes:
			warn++
			line = fmt.Sprintf("⚠️ %s: WARNING (%d min) - May be slow", name, age)
		default:
			line = fmt.Sprintf("✅ %s: ACTIVE (%d min ago)", name, age)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return stale, warn, err
		}
	}
	return stale, warn, nil
}
