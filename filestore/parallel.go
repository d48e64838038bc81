package filestore

import (
	"context"
	"sync"
)

// parallel calls fn(j) for every j in [0, n) on up to workers goroutines,
// and stops handing out work once ctx is done. It returns when every call
// made has returned.
func parallel(ctx context.Context, n, workers int, fn func(j int)) {
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= n || ctx.Err() != nil {
					return
				}
				fn(j)
			}
		})
	}
	wg.Wait()
}
