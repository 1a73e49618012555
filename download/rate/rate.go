// Package rate caps how fast bytes arrive, across every download of a run,
// with a token bucket whose rate may follow a weekly schedule.
package rate

import (
	"context"
	"io"
	"math"
	"sync"
	"time"

	"github.com/quak-photos/quak/retry"
)

// Limiter lets through at most the bytes a second its schedule gives for
// the moment, in bursts of at most one second's worth. When the rate
// changes, reads and waits under way go on at the new rate from that
// moment; while the schedule says none, nothing waits. Safe for
// concurrent use: all readers share it.
type Limiter struct {
	mu     sync.Mutex
	sched  Schedule
	tokens float64 // bytes; +Inf after a time without limit
	last   time.Time
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
}

// New returns a limiter of bytesPerSec at every moment. now and sleep are
// its clock (nil: the real ones).
func New(bytesPerSec int64, now func() time.Time, sleep func(context.Context, time.Duration) error) *Limiter {
	return NewScheduled(Constant(bytesPerSec), now, sleep)
}

// NewScheduled returns a limiter whose rate follows s, read in the
// location of now's times. now and sleep are its clock (nil: the real
// ones).
func NewScheduled(s Schedule, now func() time.Time, sleep func(context.Context, time.Duration) error) *Limiter {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = retry.Sleep
	}
	return &Limiter{sched: s, now: now, sleep: sleep, last: now()}
}

// refill adds the bytes allowed from l.last to now, slot by slot of the
// schedule, the bucket never holding more than a second of the rate.
func (l *Limiter) refill(now time.Time) {
	for l.last.Before(now) {
		r, until := l.sched.At(l.last)
		end := now
		if !until.IsZero() && until.Before(now) {
			end = until
		}
		if r == 0 {
			l.tokens = math.Inf(1)
		} else {
			l.tokens = min(l.tokens+end.Sub(l.last).Seconds()*float64(r), float64(r))
		}
		l.last = end
	}
}

// Wait takes n bytes' worth of tokens, waiting until they are there or ctx
// ends. A wait that reaches a change of rate goes on at the new rate, and
// ends at once when the new rate is none.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	l.mu.Lock()
	now := l.now()
	l.refill(now)
	r, _ := l.sched.At(now)
	if r == 0 {
		l.mu.Unlock()
		return nil
	}
	l.tokens = min(l.tokens, float64(r)) - float64(n)
	debt := -l.tokens
	l.mu.Unlock()
	for debt > 0 {
		r, until := l.sched.At(now)
		if r == 0 {
			return nil
		}
		d := time.Duration(debt / float64(r) * float64(time.Second))
		if !until.IsZero() && until.Sub(now) < d {
			d = until.Sub(now)
		}
		if d <= 0 {
			return nil
		}
		if err := l.sleep(ctx, d); err != nil {
			return err
		}
		debt -= d.Seconds() * float64(r)
		now = now.Add(d)
	}
	return nil
}

// Reader passes r's bytes through l. Each read asks for at most a
// sixteenth of a second's worth at the rate of the moment, so bytes
// arrive evenly.
func (l *Limiter) Reader(ctx context.Context, r io.ReadCloser) io.ReadCloser {
	return &reader{l: l, ctx: ctx, r: r}
}

// chunk is the most one read asks for now (0: no limit).
func (l *Limiter) chunk() int {
	r, _ := l.sched.At(l.now())
	if r == 0 {
		return 0
	}
	return max(int(r/16), 4096)
}

type reader struct {
	l   *Limiter
	ctx context.Context
	r   io.ReadCloser
}

func (r *reader) Read(p []byte) (int, error) {
	if m := r.l.chunk(); m > 0 && len(p) > m {
		p = p[:m]
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
