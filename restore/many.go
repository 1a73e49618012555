package restore

import (
	"context"
	"io"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"
)

// each restores the originals, r.o.Concurrency at a time. The first error
// that ends the run (fatal) stops the others and is returned; a file that
// fails on its own is counted and named, and the run goes on.
func (r *run) each(ctx context.Context, files []*original) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.o.Concurrency)
	for _, o := range files {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			err := r.one(gctx, o)
			switch {
			case err == nil:
				return nil
			case fatal(gctx, err):
				return err
			}
			r.failed(o, err)
			return nil
		})
	}
	err := g.Wait()
	sort.SliceStable(r.sum.Failures, func(i, j int) bool { return r.sum.Failures[i].Source < r.sum.Failures[j].Source })
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// failed counts and names an original that could not be restored.
func (r *run) failed(o *original, err error) {
	where := o.where()
	r.note(Event{Kind: Failed, Source: o.rec.ID, Title: o.rec.Meta.Title, Where: where, Err: err}, func(s *Summary) {
		s.Failed++
		s.Failures = append(s.Failures, Failure{Source: o.rec.ID, Title: o.rec.Meta.Title, Where: where, Error: err.Error()})
	})
}

// note applies count to the summary and reports e, one goroutine at a
// time; e with no Kind is not reported.
func (r *run) note(e Event, count func(*Summary)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	count(r.sum)
	if e.Kind != "" && r.o.Events != nil {
		r.o.Events(e)
	}
}

// addBytes counts n ciphertext bytes of an original sent.
func (r *run) addBytes(n int64) {
	r.note(Event{}, func(s *Summary) {
		s.Bytes += n
		if r.o.Progress != nil {
			r.o.Progress(n)
		}
	})
}

// keyLocks hands out one lock per content key: two originals of the same
// content are restored one after the other, so the second finds the
// first's file in the target instead of uploading it again.
type keyLocks struct {
	mu     sync.Mutex
	held   map[string]chan struct{}
	unsure map[string]bool // keys whose commit failed after it was sent
}

// markUnsure records that key's content may be in the target unconfirmed.
func (k *keyLocks) markUnsure(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.unsure == nil {
		k.unsure = map[string]bool{}
	}
	k.unsure[key] = true
}

func (k *keyLocks) isUnsure(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.unsure[key]
}

// lock waits until no other goroutine holds key (calling waiting before
// it waits), then holds it until the returned func is called, or returns
// ctx's error.
func (k *keyLocks) lock(ctx context.Context, key string, waiting func()) (func(), error) {
	for {
		k.mu.Lock()
		if k.held == nil {
			k.held = map[string]chan struct{}{}
		}
		busy, ok := k.held[key]
		if !ok {
			done := make(chan struct{})
			k.held[key] = done
			k.mu.Unlock()
			return func() {
				k.mu.Lock()
				delete(k.held, key)
				k.mu.Unlock()
				close(done)
			}, nil
		}
		k.mu.Unlock()
		waiting()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// lockedReader makes a reader (a test's source of randomness) safe for
// the goroutines of one run.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}
