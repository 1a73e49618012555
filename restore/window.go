package restore

import (
	"context"
	"sync"
	"time"
)

// window keeps upload-URL minting under museum's limit of so many a minute
// per user and route, which it enforces with a 429 and no Retry-After: a
// call that would be one too many in the last minute waits until the
// oldest of them is a minute old.
type window struct {
	mu    sync.Mutex // one wait at a time: later calls queue behind a sleep
	max   int
	now   func() time.Time
	sleep func(context.Context, time.Duration) error
	times map[string][]time.Time // route → the last calls, oldest first
}

func newWindow(max int, now func() time.Time, sleep func(context.Context, time.Duration) error) *window {
	return &window{max: max, now: now, sleep: sleep, times: map[string][]time.Time{}}
}

// wait returns when one more call of route keeps it within the limit, or
// with ctx's error.
func (w *window) wait(ctx context.Context, route string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
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
