// Package rate caps how fast bytes arrive, across every download of a run,
// with a token bucket.
package rate

import (
	"context"
	"io"
	"sync"
	"time"
)

// Limiter lets at most Rate bytes a second through, in bursts of at most
// one second's worth. Safe for concurrent use: all readers share it.
type Limiter struct {
	mu     sync.Mutex
	rate   float64 // bytes per second
	tokens float64
	last   time.Time
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
}

// New returns a limiter of bytesPerSec. now and sleep are its clock (nil:
// the real ones).
func New(bytesPerSec int64, now func() time.Time, sleep func(context.Context, time.Duration) error) *Limiter {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = realSleep
	}
	return &Limiter{rate: float64(bytesPerSec), now: now, sleep: sleep, last: now()}
}

func realSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Wait takes n bytes' worth of tokens, waiting until they are there or ctx
// ends.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	l.mu.Lock()
	now := l.now()
	l.tokens = min(l.tokens+now.Sub(l.last).Seconds()*l.rate, l.rate)
	l.last = now
	l.tokens -= float64(n)
	debt := -l.tokens
	l.mu.Unlock()
	if debt <= 0 {
		return nil
	}
	return l.sleep(ctx, time.Duration(debt/l.rate*float64(time.Second)))
}

// Reader passes r's bytes through l. Each read asks for at most a
// sixteenth of a second's worth, so bytes arrive evenly.
func (l *Limiter) Reader(ctx context.Context, r io.ReadCloser) io.ReadCloser {
	return &reader{l: l, ctx: ctx, r: r, max: max(int(l.rate/16), 4096)}
}

type reader struct {
	l   *Limiter
	ctx context.Context
	r   io.ReadCloser
	max int
}

func (r *reader) Read(p []byte) (int, error) {
	if len(p) > r.max {
		p = p[:r.max]
	}
	n, err := r.r.Read(p)
	if n > 0 {
		if werr := r.l.Wait(r.ctx, n); werr != nil && err == nil {
			err = werr
		}
	}
	return n, err
}

func (r *reader) Close() error { return r.r.Close() }
