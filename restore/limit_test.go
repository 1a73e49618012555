package restore

import (
	"context"
	"crypto/md5"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/errs"
)

// clocked makes o's sleeps move both the run's clock and the fake
// server's, recording each.
func (e *env) clocked(o *Options) *[]time.Duration {
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	var slept []time.Duration
	o.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	o.Policy.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		now = now.Add(d)
		slept = append(slept, d)
		mu.Unlock()
		e.s.Advance(d)
		return ctx.Err()
	}
	return &slept
}

// The target's minute of upload URLs taken by someone else (its phone's
// app, an earlier run): museum refuses the rest of the minute with a 429,
// and the run waits it out, every file restored, none failed.
func TestAMinuteOfUploadURLsTakenElsewhereIsWaitedOut(t *testing.T) {
	e, _, _ := twoInTrip(t)
	c := e.s.Client(nil).WithToken(e.dst.Token())
	for range enteapitest.UploadURLLimit {
		_, err := c.UploadURL(context.Background(), 10, md5.Sum(nil))
		require.NoError(t, err)
	}
	o := e.options()
	slept := e.clocked(&o)
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Zero(t, sum.Failed)
	assert.Equal(t, 2, sum.Uploaded)
	var waited time.Duration
	for _, d := range *slept {
		assert.Equal(t, limitProbe, d)
		waited += d
	}
	assert.GreaterOrEqual(t, waited, time.Minute-limitProbe, "the minute is waited out")
	assert.Less(t, waited, time.Minute+limitProbe, "and no longer")
	waits := 0
	for _, k := range e.kinds() {
		if k == Waiting {
			waits++
		}
	}
	assert.Equal(t, 1, waits, "said once for the refusals in a row")
	e.sameAsSource()
}

// A Retry-After is waited as asked.
func TestAnUploadURLRefusalWaitsTheRetryAfterAsked(t *testing.T) {
	e, _, _ := twoInTrip(t)
	e.s.Inject("POST /files/upload-url", enteapitest.RetryAfter(429, "37"))
	o := e.options()
	slept := e.clocked(&o)
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Zero(t, sum.Failed)
	assert.Equal(t, []time.Duration{37 * time.Second}, *slept)
}

// Refused for ten minutes in a row, the run stops: not a file's failure.
func TestUploadURLsRefusedForTenMinutesStopTheRun(t *testing.T) {
	e, _, _ := twoInTrip(t)
	e.s.Inject("POST /files/upload-url", enteapitest.Repeat(enteapitest.RateLimited(), 1000)...)
	o := e.options()
	slept := e.clocked(&o)
	sum, err := e.restoreWith(o)
	var rl *RateLimitError
	require.ErrorAs(t, err, &rl)
	assert.Equal(t, routeURL, rl.Route)
	assert.Equal(t, limitGiveUp, rl.For)
	assert.Zero(t, sum.Failed, "no file failed")
	assert.Len(t, *slept, int(limitGiveUp/limitProbe))
}

func TestWindowHoldsARouteRefusedUntilACallPasses(t *testing.T) {
	now := time.Unix(0, 0)
	var slept []time.Duration
	w := newWindow(100, func() time.Time { return now }, func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		now = now.Add(d)
		return nil
	})
	ctx := context.Background()
	limited := &errs.ApiError{Status: 429}
	d, first, err := w.refused("a", limited)
	require.NoError(t, err)
	assert.Equal(t, limitProbe, d)
	assert.True(t, first)
	require.NoError(t, w.wait(ctx, "b"), "another route is not held")
	assert.Empty(t, slept)
	require.NoError(t, w.wait(ctx, "a"))
	assert.Equal(t, []time.Duration{limitProbe}, slept)
	require.NoError(t, w.wait(ctx, "a"), "a hold is waited once")
	assert.Len(t, slept, 1)

	now = now.Add(limitGiveUp - limitProbe - time.Nanosecond)
	_, first, err = w.refused("a", limited)
	require.NoError(t, err, "just short of the bound")
	assert.False(t, first, "one more of those in a row")
	now = now.Add(time.Nanosecond)
	_, _, err = w.refused("a", limited)
	var rl *RateLimitError
	require.ErrorAs(t, err, &rl)
	assert.ErrorIs(t, err, limited)

	w.passed("a")
	_, first, err = w.refused("a", limited)
	require.NoError(t, err, "a call that passed starts the count again")
	assert.True(t, first)

	d, _, err = w.refused("c", &errs.ApiError{Status: 429, RetryAfter: "0"})
	require.NoError(t, err)
	assert.Equal(t, time.Second, d, "a Retry-After of nothing still waits a second")
	stop := errors.New("stopped")
	w.sleep = func(context.Context, time.Duration) error { return stop }
	assert.ErrorIs(t, w.wait(ctx, "c"), stop)
}

func TestAnObjectGoesInPartsFromFiveChunksOn(t *testing.T) {
	assert.Equal(t, routeURL, routeFor(multipartFrom-1))
	assert.Equal(t, routeMultipart, routeFor(multipartFrom))
}

// Refusals count in a row: one call that passes between two spells
// starts the ten minutes again.
func TestAPassingCallStartsTheTenMinutesAgain(t *testing.T) {
	e, _, _ := twoInTrip(t)
	spell := int(limitGiveUp/limitProbe) - 2
	faults := append(enteapitest.Repeat(enteapitest.RateLimited(), spell), enteapitest.Pass())
	e.s.Inject("POST /files/upload-url", append(faults, enteapitest.Repeat(enteapitest.RateLimited(), spell)...)...)
	o := e.options()
	slept := e.clocked(&o)
	sum, err := e.restoreWith(o)
	require.NoError(t, err, "two spells of nine minutes and more, not ten in a row")
	assert.Zero(t, sum.Failed)
	assert.Len(t, *slept, 2*spell)
}
