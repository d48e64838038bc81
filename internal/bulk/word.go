package bulk

import (
	"time"

	"github.com/ckpt-dev/ckpt"
)

// Word is the one word a checkpoint's presence shows as on the dashboard
// and in the presence filter everywhere: ckpt.PresenceOf's state, except
// work blocked or waiting on a person says so (ckpt.StateOf, what the
// inbox and the webhooks read), and work that is not live shows its status
// (pending, abandoned) or archived. since and why go with it.
func Word(s *ckpt.Summary, now time.Time, t ckpt.Thresholds, alive ckpt.AliveFunc) (word string, since time.Time, why string) {
	v := ckpt.PresenceOf(s, now, t, alive)
	word, since, why = string(v.State), v.Since, v.Why
	if st := ckpt.StateOf(s, now, t, alive); (st == "blocked" || st == "waiting") && string(st) != word {
		word, since, why = string(st), s.UpdatedAt, ""
	}
	if v.State == ckpt.PresenceNone && word == string(v.State) {
		word, since = string(s.Status), s.UpdatedAt
		if s.Archived != nil {
			word, since, why = "archived", s.Archived.At, s.Archived.Reason
		}
	}
	return word, since, why
}
