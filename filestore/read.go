package filestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt"
)

// Get implements ckpt.Store. It takes no lock. A negative rev fails with
// ckpt.ErrInvalid; damage that stops it from knowing the state wraps
// ckpt.ErrCorrupt.
func (s *Store) Get(ctx context.Context, id string, rev int64) (*ckpt.Checkpoint, error) {
	if err := s.begin(ctx, id); err != nil {
		return nil, err
	}
	if rev < 0 {
		return nil, fmt.Errorf("%w: revision %d of %s is negative: 0 is the latest, revisions count from 1", ckpt.ErrInvalid, rev, id)
	}
	f := s.files(id)
	if err := realDir(f.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err // never read through a link
	}
	cur, err := s.load(f)
	if err != nil {
		return nil, err
	}
	if cur.state == nil {
		return nil, notFound(id)
	}
	st := cur.state
	if rev > cur.rev() {
		return nil, fmt.Errorf("%w: %s has %d revisions, not %d", ckpt.ErrNotFound, id, cur.rev(), rev)
	}
	if rev > 0 {
		if st, err = s.stateAt(f, cur, rev); err != nil {
			return nil, err
		}
	}
	fillLiveness(st, f)
	return st, nil
}

// History implements ckpt.Store. It takes no lock; a torn last line (a write
// in progress or interrupted) is not an event. Damage wraps ckpt.ErrCorrupt.
func (s *Store) History(ctx context.Context, id string, from int64, limit int) ([]ckpt.Event, error) {
	if err := s.begin(ctx, id); err != nil {
		return nil, err
	}
	f := s.files(id)
	if err := realDir(f.dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err // never read through a link
	}
	cur, err := s.load(f)
	if err != nil {
		return nil, err
	}
	if cur.state == nil {
		return nil, notFound(id)
	}
	data, err := readRange(f.history(), 0, cur.end)
	if err != nil {
		return nil, fmt.Errorf("filestore: %s: %w", id, err)
	}
	out := []ckpt.Event{}
	r := scanHistory(data, 0, ckpt.Chain{}, func(e ckpt.Event, _ int64) error {
		if e.Seq >= from && (limit <= 0 || len(out) < limit) {
			out = append(out, e)
		}
		return nil
	})
	if r.bad != nil {
		return nil, damaged(id, "%s", r.bad)
	}
	if r.chain.Seq != cur.rev() {
		return nil, damaged(id, "history.jsonl has %d events but the state is at revision %d", r.chain.Seq, cur.rev())
	}
	return out, nil
}

// listFiles is List without the index (a store whose index cannot be
// read): it reads the checkpoints directory once,
// applies the prefix and the cursor (the last ID of the previous page) to
// the names, and loads the rest in parallel batches until the page is full,
// trusting each state.json whose recorded history size matches the
// history's.
func (s *Store) listFiles(ctx context.Context, opts ckpt.ListOptions) (ckpt.Page, error) {
	page := ckpt.Page{Items: []ckpt.Summary{}}
	ids, err := s.ids(opts.Prefix)
	if err != nil {
		return page, err
	}
	if opts.After != "" {
		ids = ids[sort.SearchStrings(ids, opts.After):]
		if len(ids) > 0 && ids[0] == opts.After {
			ids = ids[1:]
		}
	}
	var damaged *ckpt.DamagedError
	batch := max(opts.Limit, 64)
	for len(ids) > 0 {
		n := min(batch, len(ids))
		results, errs := s.loadSummaries(ctx, ids[:n], opts.Filter)
		if err := ctx.Err(); err != nil {
			return ckpt.Page{Items: []ckpt.Summary{}}, err
		}
		for j := range n {
			if errs[j] != nil {
				if damaged == nil {
					damaged = &ckpt.DamagedError{Err: errs[j]}
				}
				damaged.IDs = append(damaged.IDs, ids[j])
				continue
			}
			if results[j] == nil {
				continue
			}
			if opts.Limit > 0 && len(page.Items) == opts.Limit {
				page.Next = page.Items[len(page.Items)-1].ID
				break
			}
			page.Items = append(page.Items, *results[j])
		}
		if page.Next != "" {
			break
		}
		ids = ids[n:]
	}
	if damaged != nil {
		return page, damaged
	}
	return page, nil
}

// loadSummaries loads the checkpoints ids in parallel and returns the
// summary of each that flt matches (nil for the others) and each one's
// error.
func (s *Store) loadSummaries(ctx context.Context, ids []string, flt ckpt.Filter) ([]*ckpt.Summary, []error) {
	results := make([]*ckpt.Summary, len(ids))
	errs := make([]error, len(ids))
	parallel(ctx, len(ids), runtime.GOMAXPROCS(0), func(j int) {
		f := s.files(ids[j])
		cur, err := s.load(f)
		if err != nil {
			errs[j] = err
			return
		}
		if cur.state == nil {
			return
		}
		fillLiveness(cur.state, f)
		if sum := cur.state.Summary(); flt.MatchSummary(&sum) {
			results[j] = &sum
		}
	})
	return results, errs
}

// ids returns the IDs of the checkpoint directories whose ID has prefix,
// in ID order. Names that map to no valid ID are skipped (check reports them).
func (s *Store) ids(prefix string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(s.dir, checkpointsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("filestore: listing checkpoints: %w", err)
	}
	ids := make([]string, 0, len(des))
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		if id, ok := idFromDirName(de.Name()); ok && strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids, nil
}
