package filestore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ckpt-dev/ckpt"
	"github.com/ckpt-dev/ckpt/internal/wire"
)

// EachSummaryJSON calls fn, in ID order, with the JSON of every summary a
// listing of f returns (ckpt.EachPage's), each as wire.Append (and so
// json.Marshal) writes it: the rows of `ckpt ls --json`. A summary the
// index holds in the form the encoder writes is copied from the index
// with its liveness put in (summary_canon.go), instead of being decoded
// and encoded again; any other is decoded, so the bytes are the same
// either way. fn must not keep row, which is reused. As with EachPage, a
// *ckpt.DamagedError comes after every readable row; an error from fn
// stops the listing and is returned.
func (s *Store) EachSummaryJSON(ctx context.Context, f ckpt.Filter, fn func(row []byte) error) error {
	f.Quiet = nil
	_, err := s.list(ctx, ckpt.ListOptions{Filter: f}, fn)
	return err
}

// resolvedRaw is resolved for a listing that copies summaries: a journal
// line whose summary is in the encoder's form (canonSummary) keeps its
// summary's bytes, as an index line does, and the fields a listing
// filters on are read from them without a decode. Any other line is
// resolved.
func (e ientry) resolvedRaw() ientry {
	if e.raw == nil {
		return e
	}
	je, sum, ok := decodeEnvelope(e.raw)
	if !ok || sum == nil || je.ID != e.id || je.Kind != ckpt.ChangeEvent {
		return e.resolved()
	}
	sp, ok := canonSummary(sum)
	if !ok || !sp.stPlain || !sp.idPlain || string(sp.id) != e.id {
		return e.resolved()
	}
	updated, uok := parseUTCNano(sp.updated)
	interval, iok := canonInterval(sp.interval)
	if !uok || !iok {
		return e.resolved()
	}
	return ientry{id: e.id, rev: je.Rev, size: je.Size, updated: updated.UnixNano(), interval: interval,
		status: statusOf(sp.status), archived: sp.archived, summary: sum, hbStart: int32(sp.hbStart), hbEnd: int32(sp.hbEnd)}
}

// canonInterval returns the duration of a heartbeat's interval value
// (quoted; nil: none, 0) if it is in the form the encoder writes.
func canonInterval(v []byte) (int64, bool) {
	if v == nil {
		return 0, true
	}
	if len(v) < 2 {
		return 0, false
	}
	d, err := time.ParseDuration(string(v[1 : len(v)-1]))
	if err != nil || d <= 0 || !intervalIs(v, int64(d)) {
		return 0, false
	}
	return int64(d), true
}

// emitFiles is a listing from the files (listFiles) for EachSummaryJSON.
func (s *Store) emitFiles(ctx context.Context, opts ckpt.ListOptions, emit func([]byte) error) (ckpt.Page, error) {
	page, err := s.listFiles(ctx, opts)
	if d := (*ckpt.DamagedError)(nil); err != nil && !errors.As(err, &d) {
		return page, err
	}
	var row []byte
	for i := range page.Items {
		var aerr error
		if row, aerr = wire.Append(row[:0], &page.Items[i]); aerr != nil {
			return page, aerr
		}
		if eerr := emit(row); eerr != nil {
			return page, eerr
		}
	}
	return ckpt.Page{Items: []ckpt.Summary{}}, err
}

// spliceable reports whether a copied summary can be matched against f:
// f filters on nothing but the ID's prefix, status and archived, which
// the index's bytes show without a decode.
func spliceable(f *ckpt.Filter) bool {
	return f.Agent == "" && f.Parent == "" && f.Label == "" && f.SeenBefore.IsZero() && f.UpdatedSince.IsZero()
}

// rowFor is summaryFor writing the summary's JSON to *row: copied from
// the index when it can be (see EachSummaryJSON), else decoded into *sum
// and encoded. A summary that cannot be encoded leaves *row nil (the
// caller encodes *sum again for the error).
func (s *Store) rowFor(dir listDir, e ientry, flt *ckpt.Filter, settled bool, sum *ckpt.Summary, row *[]byte) (bool, error) {
	at, p, trusted := s.livenessOf(dir, e, settled)
	if e.summary != nil && !e.unknown && spliceable(flt) {
		state := viewTrusted
		if !trusted {
			state = s.viewState(dir, e)
		}
		if state == viewGone {
			return false, nil
		}
		if state == viewTrusted {
			if ok, match := spliceRow(row, e, at, p, flt); ok {
				return match, nil
			}
		}
	}
	found, err := s.summaryWith(dir, e, flt, trusted, at, p, sum)
	if found && err == nil {
		var aerr error
		if *row, aerr = wire.Append((*row)[:0], sum); aerr != nil {
			*row = nil
		}
	}
	return found, err
}

const (
	viewTrusted = iota // the view's summary is the checkpoint's
	viewStale          // the files must be read
	viewGone           // the checkpoint is gone
)

// viewState is currentSummary's judgement without its decode: whether e's
// own summary is the checkpoint's (two stats).
func (s *Store) viewState(dir listDir, e ientry) int {
	size, missing, ok := dir.historySize(e.id)
	switch {
	case missing:
		return viewGone
	case ok && size == e.size && dir.exists(e.id, stateName):
		return viewTrusted
	}
	return viewStale
}

// spliceRow sets *dst to e's summary from the index with liveness (at, p),
// if the index holds it in the encoder's form; ok is false otherwise (and
// *dst is then unchanged). match is the filter's verdict on it.
func spliceRow(dst *[]byte, e ientry, at time.Time, p ckpt.Presence, flt *ckpt.Filter) (ok, match bool) {
	var sp canonSpans
	status := e.status
	if e.hbEnd > 0 && int(e.hbEnd) <= len(e.summary) {
		// Checked by resolvedRaw, which read e's fields from it.
		sp = canonSpans{archived: e.archived, hbStart: int(e.hbStart), hbEnd: int(e.hbEnd)}
		if sp.hbEnd-sp.hbStart > len("{}") {
			sp.interval = e.summary[sp.hbStart+len(`{"interval":`) : sp.hbEnd-1]
		}
	} else {
		sp, ok = canonSummary(e.summary)
		if !ok || !sp.idPlain || !sp.stPlain || string(sp.id) != e.id || !intervalIs(sp.interval, e.interval) {
			return false, false
		}
		if len(flt.Status) > 0 {
			status = statusOf(sp.status)
		}
	}
	// As MatchSummary judges the decoded summary (the prefix was matched
	// on e.id, which is its ID).
	if sp.archived && !flt.IncludeArchived || len(flt.Status) > 0 && !slices.Contains(flt.Status, status) {
		return true, false
	}
	b := append((*dst)[:0], e.summary[:sp.hbStart]...)
	b, ok = appendHeartbeat(b, at, sp.interval, p)
	if !ok {
		return false, false
	}
	*dst = append(b, e.summary[sp.hbEnd:]...)
	return true, true
}

// intervalIs reports whether the heartbeat's interval value (quoted; nil
// when omitted) is the index line's interval, as the encoder writes it.
func intervalIs(v []byte, interval int64) bool {
	if v == nil || interval <= 0 {
		return v == nil && interval == 0
	}
	if interval == int64(ckpt.DefaultInterval) {
		return string(v) == defaultIntervalJSON
	}
	enc, _ := ckpt.Duration(interval).MarshalJSON()
	return string(v) == string(enc)
}

// defaultIntervalJSON is the most common interval's value, encoded once.
var defaultIntervalJSON = func() string {
	b, _ := ckpt.Duration(ckpt.DefaultInterval).MarshalJSON()
	return string(b)
}()

// appendHeartbeat appends the heartbeat object wire writes for liveness
// (at, p) and the interval value (nil: none); ok is false for what the
// encoder writes otherwise (a time it refuses, a presence that does not
// encode), left to the decoded path.
func appendHeartbeat(b []byte, at time.Time, interval []byte, p ckpt.Presence) ([]byte, bool) {
	b = append(b, '{')
	n := len(b)
	if !at.IsZero() {
		if y := at.Year(); y < 0 || y > 9999 {
			return b, false
		}
		if _, off := at.Zone(); off%60 != 0 || off <= -24*3600 || off >= 24*3600 {
			return b, false
		}
		b = append(b, `,"last_beat":"`...)
		b = append(at.AppendFormat(b, time.RFC3339Nano), '"')
	}
	if interval != nil {
		b = append(append(b, `,"interval":`...), interval...)
	}
	if !p.IsZero() {
		var err error
		if b, err = wire.Append(append(b, `,"presence":`...), &p); err != nil {
			return b, false
		}
	}
	if len(b) > n {
		b = append(b[:n], b[n+1:]...) // the first member's comma
	}
	return append(b, '}'), true
}
