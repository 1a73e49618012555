package restore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quak-photos/quak/retry"
)

// window keeps upload-URL minting under museum's limit of so many a minute
// per user and route: a call that would be one too many in the last minute
// waits until the oldest of them is a minute old. museum counts in a
// minute of its own that starts at the first call (and counts the calls
// of other runs and apps of the account too), and refuses the rest of it
// with a 429 and no Retry-After: such a refusal holds the route back for
// the server's Retry-After when it sends one, else limitProbe at a time,
// until a call passes or limitGiveUp has gone by.
type window struct {
	mu    sync.Mutex // one wait at a time: later calls queue behind a sleep
	max   int
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	times map[string][]time.Time // route → the last calls, oldest first
	hold  map[string]time.Time   // route → no call before then (a 429)
	since map[string]time.Time   // route → the first 429 of those in a row
}

// limitProbe is how long a route refused with no Retry-After waits before
// it asks again: museum's minute ends at most 60 s after the refusal, so
// asking every 10 s loses at most that much of it.
const limitProbe = 10 * time.Second

// limitGiveUp is how long a route may be refused in a row before the run
// stops (RateLimitError): ten of museum's minutes, each taken by someone
// else's calls.
const limitGiveUp = 10 * time.Minute

// RateLimitError ends a run whose upload URLs the server refused for
// limitGiveUp in a row: not a file's failure, the next run carries on.
type RateLimitError struct {
	Route string
	For   time.Duration
	Err   error // the last refusal
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("the server refused upload URLs (%s) for %s in a row: %v", e.Route, e.For.Round(time.Second), e.Err)
}

func (e *RateLimitError) Unwrap() error { return e.Err }

func newWindow(max int, now func() time.Time, sleep func(context.Context, time.Duration) error) *window {
	return &window{max: max, now: now, sleep: sleep, times: map[string][]time.Time{},
		hold: map[string]time.Time{}, since: map[string]time.Time{}}
}

// wait returns when one more call of route keeps it within the limit, and
// past any hold a refusal put on it, or with ctx's error.
func (w *window) wait(ctx context.Context, route string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if d := w.hold[route].Sub(w.now()); d > 0 {
		if err := w.sleep(ctx, d); err != nil {
			return err
		}
	}
	ts := w.times[route]
	if len(ts) >= w.max {
		if d := ts[len(ts)-w.max].Add(time.Minute).Sub(w.now()); d > 0 {
			if err := w.sleep(ctx, d); err != nil {
				return err
			}
		}
		ts = ts[len(ts)-w.max+1:]
	}
	w.times[route] = append(ts, w.now())
	return nil
}

// refused records that the server refused a call of route for its rate
// (err, a 429), and returns how long the route is held back and whether
// this is the first refusal of those in a row; a *RateLimitError once it
// has been refused for limitGiveUp in a row.
func (w *window) refused(route string, err error) (d time.Duration, first bool, _ error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.now()
	since, ok := w.since[route]
	if !ok {
		since = now
		w.since[route] = now
	}
	if now.Sub(since) >= limitGiveUp {
		return 0, false, &RateLimitError{Route: route, For: now.Sub(since), Err: err}
	}
	d = limitProbe
	if asked, ok := retry.ServerDelay(err, now); ok {
		d = max(asked, time.Second)
	}
	w.hold[route] = now.Add(d)
	return d, !ok, nil
}

// passed records a call of route the server answered: refusals in a row
// start counting again.
func (w *window) passed(route string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.since, route)
}
