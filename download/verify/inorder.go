package verify

import (
	"context"
	"sync"

	"github.com/quak-photos/quak/download/state"
)

// maxAhead is how many looks may wait for their turn while an earlier
// file is still being read (a large video, say): the memory that keeps
// the workers busy meanwhile, a few hundred bytes a file.
const maxAhead = 256

// inOrder looks at files with up to v.o.Concurrency workers, each reading
// through a buffer of its own, and calls use with each look in the files'
// order, whichever worker finishes first. It stops at the first error use
// returns, or when ctx ends (returning ctx.Err(); a look made meanwhile is
// not used), and returns only once every worker has.
func (v *verifier) inOrder(ctx context.Context, files []*state.File, use func(*look) error) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	work := make(chan *look)
	queue := make(chan *look, maxAhead) // in files' order
	wg.Go(func() {
		defer close(work)
		defer close(queue)
		for _, f := range files {
			l := &look{f: f, done: make(chan struct{})}
			select {
			case queue <- l:
			case <-ctx.Done():
				return
			}
			select {
			case work <- l:
			case <-ctx.Done():
				return
			}
		}
	})
	for range min(v.o.Concurrency, len(files)) {
		wg.Go(func() {
			buf := make([]byte, bufferSize)
			for l := range work {
				v.look(ctx, l, buf)
				close(l.done)
			}
		})
	}
	for l := range queue {
		select {
		case <-l.done:
		case <-ctx.Done():
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := use(l); err != nil {
			return err
		}
	}
	return ctx.Err()
}
