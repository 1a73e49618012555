package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy says how often and how patiently to retry. The zero value is not
// useful; start from Default.
type Policy struct {
	MaxAttempts int           // attempts in all, the first included
	Base        time.Duration // delay before the second attempt, before jitter
	Max         time.Duration // cap on any computed delay, before jitter
	// Budget caps the total time spent waiting between attempts, never the
	// attempts themselves: a transfer that is making progress is not cut.
	Budget time.Duration
	// MaxServerDelay caps how long quak honours a server's Retry-After; a
	// longer request fails the operation now, to be retried on the next run.
	MaxServerDelay time.Duration
	// OverloadAttempts are extra attempts for answers that say the server
	// is overloaded (429, 503): with a caller that sends less after such
	// an answer, they slow a file down instead of failing it.
	OverloadAttempts int

	// Sleep waits d or until ctx ends (tests record and return at once).
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for jitter.
	Rand func() float64
	// Now is the clock used to read Retry-After dates.
	Now func() time.Time
	// OnRetry, if set, hears about each failed attempt that will be retried.
	OnRetry func(err error, attempt int, delay time.Duration)
}

// Default is quak's policy: 4 attempts, delays from 1 s doubling to a 10 s
// cap (a server's cold start takes about 8 s), each spread over ±50%, at most
// 60 s of waiting in all, and Retry-After honoured up to 60 s.
func Default() Policy {
	return Policy{
		MaxAttempts:    4,
		Base:           time.Second,
		Max:            10 * time.Second,
		Budget:         60 * time.Second,
		MaxServerDelay: 60 * time.Second,
		Sleep:          Sleep,
		Rand:           rand.Float64,
		Now:            time.Now,
	}
}

// Once is a policy of a single attempt, for calls that must never repeat
// (logins: they burn attempts and are rate-limited).
func Once() Policy {
	p := Default()
	p.MaxAttempts = 1
	return p
}

// Sleep waits d, or until ctx ends, whichever comes first, and returns ctx's
// error in the second case.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Delay is the wait before attempt+1 after attempt (1-based) failed with
// err: the server's Retry-After when it gave one, else Base doubling per
// attempt up to Max, multiplied by a jitter factor in [0.5, 1.5). ok is false
// when the server asked for more than MaxServerDelay.
func (p Policy) Delay(attempt int, err error, now time.Time, r float64) (d time.Duration, ok bool) {
	if sd, asked := ServerDelay(err, now); asked {
		return sd, sd <= p.MaxServerDelay
	}
	d = p.Base
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	return time.Duration(float64(d) * (0.5 + r)), true
}

// ErrServerBusy wraps the last error when the server asked for a longer wait
// than the policy allows.
var ErrServerBusy = errors.New("server asked to wait longer than quak will")

// Do runs op until it succeeds, fails permanently, runs out of attempts or
// budget, or ctx ends. It returns nil, or op's last error, wrapped with the
// attempt count when there was more than one, or ctx's error. op gets ctx and
// must stop when it ends.
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var waited time.Duration
	overloads := 0
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if Overloaded(err) && overloads < p.OverloadAttempts {
			overloads++
		}
		if Classify(err) == Permanent || attempt >= p.MaxAttempts+overloads {
			return wrapAttempts(err, attempt)
		}
		d, ok := p.Delay(attempt, err, p.Now(), p.Rand())
		if !ok {
			return wrapAttempts(fmt.Errorf("%w: %w", ErrServerBusy, err), attempt)
		}
		if waited+d > p.Budget {
			return wrapAttempts(err, attempt)
		}
		if p.OnRetry != nil {
			p.OnRetry(err, attempt, d)
		}
		if serr := p.Sleep(ctx, d); serr != nil {
			return serr
		}
		waited += d
	}
}

func wrapAttempts(err error, attempts int) error {
	if attempts == 1 {
		return err
	}
	return fmt.Errorf("after %d attempts: %w", attempts, err)
}
