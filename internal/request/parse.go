package request

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// Parsers of the text forms a person types (flag values, tool arguments).
// Each takes the name the surface gives the value, for its messages; each
// error wraps ckpt.ErrInvalid and names the form that is accepted.

// ParseStatus maps a status word (the seeds' words such as PASSED or
// NOT_STARTED too) onto a status.
func ParseStatus(name, word string) (ckpt.Status, error) {
	s, err := ckpt.ParseStatus(word)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// ParseInterval reads a positive Go duration such as 90s, 15m or 1h30m.
func ParseInterval(name, s string) (ckpt.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s %q is not a positive duration: use a form such as 90s, 15m or 1h30m", ckpt.ErrInvalid, name, s)
	}
	return ckpt.Duration(d), nil
}

// ParseSpan reads a positive span of time: a Go duration (90s, 15m,
// 1h30m) or a whole number of days (2d), as thresholds and periods are
// given on every surface.
func ParseSpan(name, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	bad := fmt.Errorf("%w: %s %q is not a positive duration: use a form such as 90s, 15m, 1h30m or 7d", ckpt.ErrInvalid, name, s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > 100000 {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, bad
	}
	return d, nil
}

// ParseThresholds reads the warn and stale thresholds of a stale report
// over def (a zero field: each checkpoint's default, 2x and 4x its
// heartbeat interval), each value named as its surface names it; an empty
// value keeps def's. Warn must come before stale.
func ParseThresholds(def ckpt.Thresholds, warnName, warn, staleName, stale string) (ckpt.Thresholds, error) {
	th := def
	var err error
	if strings.TrimSpace(warn) != "" {
		if th.Warn, err = ParseSpan(warnName, warn); err != nil {
			return ckpt.Thresholds{}, err
		}
	}
	if strings.TrimSpace(stale) != "" {
		if th.Stale, err = ParseSpan(staleName, stale); err != nil {
			return ckpt.Thresholds{}, err
		}
	}
	if th.Warn > 0 && th.Stale > 0 && th.Warn >= th.Stale {
		// Each as given, or the default it kept.
		shown := func(given string, d time.Duration) string {
			if g := strings.TrimSpace(given); g != "" {
				return g
			}
			return d.String() + " (the default)"
		}
		return ckpt.Thresholds{}, fmt.Errorf("%w: %s %s is not shorter than %s %s: give a warn threshold below the stale one, e.g. %s 30m and %s 1h",
			ckpt.ErrInvalid, warnName, shown(warn, th.Warn), staleName, shown(stale, th.Stale), warnName, staleName)
	}
	return th, nil
}

// ParseProgress reads "N/M" with 0 <= N <= M.
func ParseProgress(name, s string) (ckpt.ProgressSet, error) {
	n, m, ok := strings.Cut(strings.TrimSpace(s), "/")
	if ok {
		done, err1 := strconv.Atoi(strings.TrimSpace(n))
		total, err2 := strconv.Atoi(strings.TrimSpace(m))
		if p := (ckpt.ProgressSet{Done: done, Total: total}); err1 == nil && err2 == nil && checkProgress(p) {
			return p, nil
		}
	}
	return ckpt.ProgressSet{}, fmt.Errorf("%w: %s %q: use DONE/TOTAL with whole numbers and 0 <= DONE <= TOTAL, e.g. 3/10", ckpt.ErrInvalid, name, s)
}

func checkProgress(p ckpt.ProgressSet) bool { return p.Done >= 0 && p.Total >= 0 && p.Done <= p.Total }

// parseKeyValue splits "key=value"; the key must not be empty. The value
// may be empty, and may itself contain '='.
func parseKeyValue(name, s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("%w: %s %q: use KEY=VALUE with a non-empty key", ckpt.ErrInvalid, name, s)
	}
	return k, v, nil
}

// ParseMeta reads KEY=VALUE pairs (VALUE stored as a JSON string; an empty
// VALUE deletes the key) and KEY=JSON pairs (stored as is, compacted; null
// deletes the key) into one Patch.Meta map; nil when there are none. n
// names the two forms "meta" and "meta_json".
func ParseMeta(n Names, pairs, jsonPairs []string) (map[string]json.RawMessage, error) {
	if len(pairs) == 0 && len(jsonPairs) == 0 {
		return nil, nil
	}
	meta := map[string]json.RawMessage{}
	for _, p := range pairs {
		k, v, err := parseKeyValue(n.of("meta"), p)
		if err != nil {
			return nil, err
		}
		if v == "" {
			meta[k] = json.RawMessage("null")
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %q: %v", ckpt.ErrInvalid, n.of("meta"), p, err)
		}
		meta[k] = b
	}
	for _, p := range jsonPairs {
		k, v, err := parseKeyValue(n.of("meta_json"), p)
		if err != nil {
			return nil, err
		}
		raw, err := metaJSON(n, p, k, v)
		if err != nil {
			return nil, err
		}
		meta[k] = raw
	}
	return meta, nil
}

// metaJSON checks the JSON text v given for meta key k (in pair p) and
// compacts it.
func metaJSON(n Names, p, k, v string) (json.RawMessage, error) {
	if d := jsonDepth(v); d > MaxMetaDepth {
		return nil, fmt.Errorf("%w: %s %s: the value is too deeply nested (more than %d levels of arrays and objects): use a flatter value, or a string with %s %s=TEXT",
			ckpt.ErrInvalid, n.of("meta_json"), k, MaxMetaDepth, n.of("meta"), k)
	}
	if !json.Valid([]byte(v)) {
		return nil, fmt.Errorf("%w: %s %q: the value is not valid JSON: quote strings (KEY='\"text\"') or use %s KEY=text", ckpt.ErrInvalid, n.of("meta_json"), clip(p), n.of("meta"))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(v)); err != nil {
		return nil, fmt.Errorf("%w: %s %q: %v", ckpt.ErrInvalid, n.of("meta_json"), p, err)
	}
	return json.RawMessage(compact.Bytes()), nil
}

// MaxMetaDepth bounds how deeply a meta value may nest: the seed adapters
// read files at most this deep, and a deeper value is no metadata a person
// wrote.
const MaxMetaDepth = 64

// jsonDepth returns how deeply the arrays and objects of the JSON text v
// nest, ignoring brackets inside strings; it does not validate v.
func jsonDepth(v string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

// clip shortens an argument quoted back in a message.
func clip(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// ParseReviewScores reads NAME=SCORE pairs; an empty SCORE records a
// review not yet given (null). nil when there are none.
func ParseReviewScores(name string, pairs []string) (map[string]*float64, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	scores := map[string]*float64{}
	for _, p := range pairs {
		k, v, err := parseKeyValue(name, p)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(v) == "" {
			scores[k] = nil
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: %s %q: use NAME=SCORE with a number, e.g. code=85, or NAME= for a review not given yet", ckpt.ErrInvalid, name, p)
		}
		scores[k] = &x
	}
	return scores, nil
}

// ParseIDTitle reads "ID" or "ID=Title" (a step, an acceptance criterion).
func ParseIDTitle(name, s string) (id, title string, err error) {
	id, title, _ = strings.Cut(s, "=")
	id, title = strings.TrimSpace(id), strings.TrimSpace(title)
	if id == "" {
		return "", "", fmt.Errorf("%w: %s %q: use ID or ID=TITLE with a non-empty ID, e.g. research=\"Read the docs\"", ckpt.ErrInvalid, name, s)
	}
	return id, title, nil
}

// stepStatuses are the words ParseStepStatus accepts.
var stepStatuses = map[string]ckpt.StepStatus{
	"pending": ckpt.StepPending, "todo": ckpt.StepPending,
	"in_progress": ckpt.StepInProgress, "in-progress": ckpt.StepInProgress, "start": ckpt.StepInProgress, "started": ckpt.StepInProgress, "running": ckpt.StepInProgress,
	"done": ckpt.StepDone, "complete": ckpt.StepDone, "completed": ckpt.StepDone, "passed": ckpt.StepDone,
	"failed": ckpt.StepFailed, "fail": ckpt.StepFailed,
	"skipped": ckpt.StepSkipped, "skip": ckpt.StepSkipped,
}

// ParseStepStatus maps a step status word (pending, in_progress, done,
// failed, skipped and their usual variants: start, completed, skip…) onto
// a step status; "" is no change.
func ParseStepStatus(name, word string) (ckpt.StepStatus, error) {
	w := strings.ToLower(strings.TrimSpace(word))
	if w == "" {
		return "", nil
	}
	st, ok := stepStatuses[w]
	if !ok {
		return "", fmt.Errorf("%w: %s %q: use pending, in_progress, done, failed or skipped", ckpt.ErrInvalid, name, word)
	}
	return st, nil
}
