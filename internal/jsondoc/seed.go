package jsondoc

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	ckpt "github.com/ckpt-dev/ckpt"
)

// timeLayouts are the timestamp spellings read, most exact first; the
// second field says what reading it had to assume.
var timeLayouts = []struct {
	layout string
	guess  string
}{
	{time.RFC3339Nano, ""},
	{"2006-01-02T15:04:05", "no time zone, UTC assumed"},
	{"2006-01-02 15:04:05", "no time zone, UTC assumed"},
	{"2006-01-02T15:04", "no time zone, UTC assumed"},
	{"2006-01-02 15:04", "no time zone, UTC assumed"},
	{"2006-01-02", "a date without a time, midnight UTC assumed"},
}

// ParseTime reads a timestamp leniently: RFC 3339, else a date and time
// without a zone (UTC assumed), else a date (midnight UTC). It returns the
// time in UTC; guess says what was assumed ("" for an exact RFC 3339 time);
// ok is false when s is not a timestamp at all.
func ParseTime(s string) (t time.Time, guess string, ok bool) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.Parse(l.layout, s); err == nil {
			return t.UTC(), l.guess, true
		}
	}
	return time.Time{}, "", false
}

// FormatTime writes t in RFC 3339, UTC, in whole seconds, as every seed
// writes its times (date -u +%Y-%m-%dT%H:%M:%SZ): jq's fromdateiso8601 and
// the seeds' date -d arithmetic refuse a fraction. A merge keeps a file's
// own spelling of a time ckpt did not change, fraction included.
func FormatTime(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// StatusFromWord maps a seed status word onto a Status: by ckpt.ParseStatus
// when it knows the word, else by the word's parts (READY_FOR_SYNC waits,
// "Refinement - COMPLETE" is done, …), else in progress. guessed is true
// when the word was not one ckpt.ParseStatus knows.
func StatusFromWord(word string) (s ckpt.Status, guessed bool) {
	if s, err := ckpt.ParseStatus(word); err == nil {
		return s, false
	}
	w := strings.ToUpper(word)
	for _, r := range statusParts {
		for _, p := range r.parts {
			if strings.Contains(w, p) {
				return r.status, true
			}
		}
	}
	return ckpt.StatusInProgress, true
}

// statusParts are tried in order: a word with two parts ("FAILED_BLOCKED")
// takes the first status listed.
var statusParts = []struct {
	status ckpt.Status
	parts  []string
}{
	{ckpt.StatusAbandoned, []string{"ABORT", "CANCEL", "ABANDON"}},
	{ckpt.StatusFailed, []string{"FAIL", "ERROR", "CRASH"}},
	{ckpt.StatusBlocked, []string{"BLOCK"}},
	{ckpt.StatusWaiting, []string{"WAIT", "PAUS", "READY", "HOLD", "SYNC"}},
	{ckpt.StatusDone, []string{"COMPLETE", "DONE", "PASS", "FINISH", "APPROVED"}},
	{ckpt.StatusPending, []string{"NOT_STARTED", "NOT STARTED", "BACKLOG", "TODO", "PENDING", "IDLE", "QUEUE", "NEW"}},
	{ckpt.StatusInProgress, []string{"PROGRESS", "ACTIVE", "RUNNING", "START", "WORKING"}},
}

// StepIDs makes step IDs from step texts, unique within one set: lower
// case, runs of anything but ASCII letters and digits become one '-', cut
// once 60 bytes are written (61 when the cut falls just after a '-'),
// "step" for a text with neither, and "-2", "-3", … appended where two
// texts give the same ID. Use StepIDs{} for a new set.
type StepIDs map[string]bool

// Make returns the ID for text and records it as taken.
func (u StepIDs) Make(text string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(text) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= 60 {
				break
			}
			continue
		}
		dash = true
	}
	id := b.String()
	if id == "" {
		id = "step"
	}
	base := id
	for i := 2; u[id]; i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	u[id] = true
	return id
}

// MetaSource is what an adapter keeps in Checkpoint.Meta under its format
// name: the file as read (as a JSON object) and the file's base name, so an
// export can merge with it and a mirror can write where it was read from.
type MetaSource struct {
	File   string          `json:"file,omitempty"`
	Source json.RawMessage `json:"source,omitempty"`
}

// ReadMeta returns the MetaSource kept in c.Meta under key and its Source
// parsed; a zero MetaSource and a nil object when there is none (or it has
// no source). An entry that is not a MetaSource, or whose source is not a
// JSON object, is an error that says how to clear it.
func ReadMeta(c *ckpt.Checkpoint, key string) (MetaSource, *Object, error) {
	var m MetaSource
	raw, ok := c.Meta[key]
	if !ok {
		return m, nil, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, nil, fmt.Errorf("meta %q is not the %s file record ckpt keeps (%v): remove it with ckpt update %s --meta %s=null", key, key, err, c.ID, key)
	}
	if len(m.Source) == 0 {
		return m, nil, nil
	}
	src, err := ParseObject(m.Source)
	if err != nil {
		return m, nil, fmt.Errorf("meta %q holds a source that is not a JSON object (%v): remove it with ckpt update %s --meta %s=null", key, err, c.ID, key)
	}
	return m, src, nil
}

// ImportedState returns the file c was imported from, as kept in c.Meta
// under key (see ReadMeta), and the checkpoint read makes of that file, its
// warnings dropped: the base of the three-way Merge an export does. Both are
// nil for a checkpoint that was not imported (no record, or one without a
// source). The error is ReadMeta's, or read's wrapped in one that says how
// to clear the record. read must not change the object it is given.
func ImportedState(c *ckpt.Checkpoint, key string, read func(*Object, *Notes) (*ckpt.Checkpoint, error)) (src *Object, base *ckpt.Checkpoint, err error) {
	_, src, err = ReadMeta(c, key)
	if err != nil || src == nil {
		return nil, nil, err
	}
	var discard Notes
	base, err = read(src, &discard)
	if err != nil {
		return nil, nil, fmt.Errorf("meta %q holds a file ckpt cannot read back (%v): remove it with ckpt update %s --meta %s=null", key, err, c.ID, key)
	}
	return src, base, nil
}

// WriteMeta keeps m in c.Meta under key, making c.Meta if it is nil.
func WriteMeta(c *ckpt.Checkpoint, key string, m MetaSource) {
	if c.Meta == nil {
		c.Meta = map[string]json.RawMessage{}
	}
	c.Meta[key] = Encode(m)
}
