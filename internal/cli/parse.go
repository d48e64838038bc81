package cli

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

// Parsers of flag values. Each error wraps ckpt.ErrInvalid (exit 2) and
// names the form that is accepted.

// parseStatus maps a status word (including the seeds' words such as PASSED
// or NOT_STARTED) onto a status.
func parseStatus(flag, word string) (ckpt.Status, error) {
	s, err := ckpt.ParseStatus(word)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return s, nil
}

// parseInterval reads a positive Go duration such as 90s, 15m or 1h30m.
func parseInterval(flag, s string) (ckpt.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%w: %s %q is not a positive duration: use a form such as 90s, 15m or 1h30m", ckpt.ErrInvalid, flag, s)
	}
	return ckpt.Duration(d), nil
}

// parseProgress reads "N/M" with 0 <= N <= M.
func parseProgress(flag, s string) (ckpt.ProgressSet, error) {
	bad := fmt.Errorf("%w: %s %q: use DONE/TOTAL with whole numbers and 0 <= DONE <= TOTAL, e.g. 3/10", ckpt.ErrInvalid, flag, s)
	n, m, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return ckpt.ProgressSet{}, bad
	}
	done, err1 := strconv.Atoi(strings.TrimSpace(n))
	total, err2 := strconv.Atoi(strings.TrimSpace(m))
	if err1 != nil || err2 != nil || done < 0 || total < 0 || done > total {
		return ckpt.ProgressSet{}, bad
	}
	return ckpt.ProgressSet{Done: done, Total: total}, nil
}

// parseKeyValue splits "key=value"; the key must not be empty. The value may
// be empty, and may itself contain '='.
func parseKeyValue(flag, s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	k = strings.TrimSpace(k)
	if !ok || k == "" {
		return "", "", fmt.Errorf("%w: %s %q: use KEY=VALUE with a non-empty key", ckpt.ErrInvalid, flag, s)
	}
	return k, v, nil
}

// parseMeta reads --meta KEY=VALUE (VALUE stored as a JSON string; an empty
// VALUE deletes the key) and --meta-json KEY=JSON (VALUE stored as is; null
// deletes the key) into one Patch.Meta map.
func parseMeta(pairs, jsonPairs []string) (map[string]json.RawMessage, error) {
	if len(pairs) == 0 && len(jsonPairs) == 0 {
		return nil, nil
	}
	meta := map[string]json.RawMessage{}
	for _, p := range pairs {
		k, v, err := parseKeyValue("--meta", p)
		if err != nil {
			return nil, err
		}
		if v == "" {
			meta[k] = json.RawMessage("null")
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("%w: --meta %q: %v", ckpt.ErrInvalid, p, err)
		}
		meta[k] = b
	}
	for _, p := range jsonPairs {
		k, v, err := parseKeyValue("--meta-json", p)
		if err != nil {
			return nil, err
		}
		if d := jsonDepth(v); d > maxMetaDepth {
			return nil, fmt.Errorf("%w: --meta-json %s: the value is too deeply nested (more than %d levels of arrays and objects): use a flatter value, or a string with --meta %s=TEXT",
				ckpt.ErrInvalid, k, maxMetaDepth, k)
		}
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("%w: --meta-json %q: the value is not valid JSON: quote strings (KEY='\"text\"') or use --meta KEY=text", ckpt.ErrInvalid, clipArg(p))
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(v)); err != nil {
			return nil, fmt.Errorf("%w: --meta-json %q: %v", ckpt.ErrInvalid, p, err)
		}
		meta[k] = json.RawMessage(compact.Bytes())
	}
	return meta, nil
}

// maxMetaDepth bounds how deeply a --meta-json value may nest: the seed
// adapters read files at most this deep (jsondoc.MaxDepth), and a deeper
// value is no metadata a person wrote.
const maxMetaDepth = 64

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

// clipArg shortens an argument quoted back in an error message.
func clipArg(s string) string {
	const max = 200
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// parseReviewScores reads NAME=SCORE pairs; an empty SCORE records a review
// not yet given (null).
func parseReviewScores(pairs []string) (map[string]*float64, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	scores := map[string]*float64{}
	for _, p := range pairs {
		k, v, err := parseKeyValue("--review-score", p)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(v) == "" {
			scores[k] = nil
			continue
		}
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: --review-score %q: use NAME=SCORE with a number, e.g. code=85, or NAME= for a review not given yet", ckpt.ErrInvalid, p)
		}
		scores[k] = &x
	}
	return scores, nil
}

// parseIDTitle reads "ID" or "ID=Title" (steps and acceptance criteria).
func parseIDTitle(flag, s string) (id, title string, err error) {
	id, title, _ = strings.Cut(s, "=")
	id, title = strings.TrimSpace(id), strings.TrimSpace(title)
	if id == "" {
		return "", "", fmt.Errorf("%w: %s %q: use ID or ID=TITLE with a non-empty ID, e.g. research=\"Read the docs\"", ckpt.ErrInvalid, flag, s)
	}
	return id, title, nil
}

// nonEmpty drops empty and blank entries.
func nonEmpty(list []string) []string {
	out := make([]string, 0, len(list))
	for _, s := range list {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}
