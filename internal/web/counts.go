package web

import (
	"fmt"
	"sync"
	"time"

	"github.com/ckpt-dev/ckpt"
)

// countsMaxAge is how long the presence counts of one filter are served
// from memory: every open page asks for them at most once a second while
// changes pour in (app.js, refreshCountsSoon), and a count needs the whole
// listing, so without it a hundred open pages would list the store a
// hundred times a second.
var countsMaxAge = time.Second

// countsCache shares the counts of each filter among the pages that ask
// within countsMaxAge, and has one of them compute while the others wait.
type countsCache struct {
	mu sync.Mutex
	m  map[string]*countsEntry
}

type countsEntry struct {
	mu     sync.Mutex // held while computing
	at     time.Time  // when counts were computed (monotonic clock)
	counts map[string]int
}

// get returns the counts of filter f, computed by compute or remembered
// from a call less than countsMaxAge ago. The map returned is shared:
// callers only read it.
func (c *countsCache) get(f ckpt.Filter, compute func() (map[string]int, error)) (map[string]int, error) {
	key := fmt.Sprintf("%#v", f)
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*countsEntry{}
	}
	e := c.m[key]
	if e == nil {
		if len(c.m) >= 256 { // many distinct filters: forget the old ones
			for k, old := range c.m {
				if old.mu.TryLock() {
					if time.Since(old.at) > countsMaxAge {
						delete(c.m, k)
					}
					old.mu.Unlock()
				}
			}
		}
		e = &countsEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts != nil && time.Since(e.at) < countsMaxAge {
		return e.counts, nil
	}
	counts, err := compute()
	if err != nil {
		return nil, err
	}
	e.counts, e.at = counts, time.Now()
	return counts, nil
}
