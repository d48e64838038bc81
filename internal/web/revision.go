package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// revisionOut is the preview of restoring a revision: the state the
// checkpoint had then, and what a restore would change in the state now.
type revisionOut struct {
	Rev     int64            `json:"rev"`
	Current int64            `json:"current_rev"`
	State   *ckpt.Checkpoint `json:"state"`
	// Changes are the fields a restore changes, now → after the restore,
	// at most maxChanges of them; More says how many were left out.
	Changes []fieldChange `json:"changes"`
	More    int           `json:"more,omitempty"`
	CanAct  bool          `json:"can_act"`
}

// fieldChange is one field that differs: its path in the checkpoint's JSON
// (steps[research].status), and its value now and after the restore ("" for
// a field that is absent).
type fieldChange struct {
	Field string `json:"field"`
	Now   string `json:"now"`
	Then  string `json:"then"`
}

const maxChanges = 200

// ignoredFields are what a restore does not bring back or what every
// write moves: the revision, the update time and the liveness record.
var ignoredFields = []string{"rev", "updated_at", "heartbeat", "session"}

// revision: GET /ui/api/revision?id=&rev=: the state at revision rev and the
// difference a restore makes, computed by applying the very event
// ckpt.RestoreCheckpoint appends to the state now, in memory.
func (h *Handler) revision(r *http.Request, p Principal) (any, error) {
	rev, err := strconv.ParseInt(r.URL.Query().Get("rev"), 10, 64)
	if err != nil || rev < 1 {
		return nil, badRequest("rev %q: give a revision of 1 or more", r.URL.Query().Get("rev"))
	}
	now, err := h.get(r, p, 0)
	if err != nil {
		return nil, err
	}
	if rev > now.Rev {
		return nil, &apiError{http.StatusNotFound, ckpt.CodeNotFound, fmt.Sprintf("%s has no revision %d: it is at revision %d", now.ID, rev, now.Rev)}
	}
	then, err := h.opts.Store.Get(r.Context(), now.ID, rev)
	if err != nil {
		return nil, err
	}
	out := revisionOut{Rev: rev, Current: now.Rev, State: then, Changes: []fieldChange{}, CanAct: p.may(now.ID) && rev < now.Rev && now.Archived == nil}
	if rev == now.Rev {
		return out, nil
	}
	e := ckpt.MustEvent(ckpt.EventRestored, h.opts.Now(), p.actor(), ckpt.Snapshot{State: *then, Rev: rev})
	e.Seq = now.Rev + 1
	copyNow, err := cloneCheckpoint(now)
	if err != nil {
		return nil, err
	}
	after, err := ckpt.Apply(now.ID, copyNow, e)
	if err != nil {
		return nil, err
	}
	out.Changes, out.More, err = diffStates(now, after)
	return out, err
}

func cloneCheckpoint(c *ckpt.Checkpoint) (*ckpt.Checkpoint, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var out ckpt.Checkpoint
	return &out, json.Unmarshal(b, &out)
}

// diffStates lists the fields whose values differ between a and b, by path,
// in path order.
func diffStates(a, b *ckpt.Checkpoint) ([]fieldChange, int, error) {
	fa, err := flatState(a)
	if err != nil {
		return nil, 0, err
	}
	fb, err := flatState(b)
	if err != nil {
		return nil, 0, err
	}
	var paths []string
	for k, v := range fa {
		if fb[k] != v {
			paths = append(paths, k)
		}
	}
	for k := range fb {
		if _, ok := fa[k]; !ok {
			paths = append(paths, k)
		}
	}
	slices.Sort(paths)
	out := make([]fieldChange, 0, min(len(paths), maxChanges))
	for _, k := range paths[:min(len(paths), maxChanges)] {
		out = append(out, fieldChange{Field: k, Now: fa[k], Then: fb[k]})
	}
	return out, len(paths) - len(out), nil
}

// flatState is c's JSON as path → value: objects by key, lists of objects
// that have an "id" by that ID (steps[research]), other lists by index.
func flatState(c *ckpt.Checkpoint) (map[string]string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	for _, k := range ignoredFields {
		delete(v, k)
	}
	out := map[string]string{}
	flatten("", v, out)
	return out, nil
}

func flatten(path string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			flatten(p, e, out)
		}
	case []any:
		for i, e := range x {
			key := strconv.Itoa(i)
			if m, ok := e.(map[string]any); ok {
				if id, ok := m["id"].(string); ok && id != "" {
					key = id
				}
			}
			flatten(path+"["+key+"]", e, out)
		}
	case nil:
	case string:
		out[path] = leafText(x)
	default:
		b, _ := json.Marshal(x)
		out[path] = string(b)
	}
}

// leafText is a value as the preview shows it: a time in the page's
// words, long text cut.
func leafText(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil && strings.Contains(s, "T") {
		return t.UTC().Format("2006-01-02 15:04:05Z")
	}
	if r := []rune(s); len(r) > 300 {
		return string(r[:299]) + "…"
	}
	return s
}
