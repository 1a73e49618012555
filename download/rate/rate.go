// Package rate caps how fast bytes arrive, across every download of a run,
// with a token bucket (golang.org/x/time/rate's) whose rate may follow a
// weekly schedule.
package rate

import (
	"context"
	"io"
	"math"
	"sync"
	"time"

	xrate "golang.org/x/time/rate"

	"github.com/quak-photos/quak/retry"
)

// Limiter lets through at most the bytes a second its schedule gives for
// the moment, in bursts of at most one second's worth. When the rate
// changes, reads and waits under way go on at the new rate from that
// moment; while the schedule says none, nothing waits. Safe for
// concurrent use: all readers share it.
//
// Its bucket is golang.org/x/time/rate's, of one second's worth, set to
// each rate of the schedule as its moment comes; a bucket begins empty,
// and one after a time with no limit begins full.
type Limiter struct {
	mu     sync.Mutex
	sched  Schedule
	bucket *xrate.Limiter // nil while the schedule says none
	last   time.Time      // the moment the bucket follows the schedule up to
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
	l := &Limiter{sched: s, now: now, sleep: sleep, last: now()}
	if r, _ := s.At(l.last); r > 0 {
		l.bucket = bucket(r)
		l.bucket.AllowN(l.last, l.bucket.Burst()) // it begins empty
	}
	return l
}

// bucket is a full bucket of one second of r bytes a second.
func bucket(r int64) *xrate.Limiter { return xrate.NewLimiter(xrate.Limit(r), burst(r)) }

// burst is one second of r bytes a second.
func burst(r int64) int { return int(min(r, math.MaxInt)) }

// follow sets the bucket to each rate of the schedule from l.last to now,
// at the moment it starts, so that the bytes allowed meanwhile came at the
// rate of their time.
func (l *Limiter) follow(now time.Time) {
	for {
		_, until := l.sched.At(l.last)
		if until.IsZero() || until.After(now) {
			break
		}
		r, _ := l.sched.At(until)
		switch {
		case r == 0:
			l.bucket = nil
		case l.bucket == nil:
			l.bucket = bucket(r)
		default:
			l.bucket.SetLimitAt(until, xrate.Limit(r))
			l.bucket.SetBurstAt(until, burst(r))
		}
		l.last = until
	}
	if now.After(l.last) {
		l.last = now
	}
}

// Wait takes n bytes' worth from the bucket, waiting until they are there
// or ctx ends. A wait that reaches a change of rate goes on at the new
// rate, and ends at once when the new rate is none.
func (l *Limiter) Wait(ctx context.Context, n int) error {
	l.mu.Lock()
	now := l.now()
	l.follow(now)
	if l.bucket == nil {
		l.mu.Unlock()
		return nil
	}
	for b := l.bucket.Burst(); n > 0; n -= b {
		l.bucket.ReserveN(now, min(n, b)) // a burst at a time; the bucket owes the rest
	}
	debt := -l.bucket.TokensAt(now)
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
