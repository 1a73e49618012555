package retry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/errs"
)

// recorder is a Policy whose sleeps are recorded and return at once.
type recorder struct {
	sleeps  []time.Duration
	retries []int
}

func (r *recorder) policy() Policy {
	p := Default()
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		r.sleeps = append(r.sleeps, d)
		return ctx.Err()
	}
	p.Rand = func() float64 { return 0.5 } // jitter factor exactly 1
	p.Now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
	p.OnRetry = func(_ error, attempt int, _ time.Duration) { r.retries = append(r.retries, attempt) }
	return p
}

// failing returns an op that fails with errs in order, then succeeds.
func failing(calls *int, seq ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(seq) {
			return seq[*calls-1]
		}
		return nil
	}
}

var e503 = &errs.ApiError{Status: 503}

func TestDoRetriesTransientThenSucceeds(t *testing.T) {
	var r recorder
	calls := 0
	err := Do(context.Background(), r.policy(), failing(&calls, e503, e503))
	require.NoError(t, err)
	assert.Equal(t, 3, calls)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, r.sleeps)
	assert.Equal(t, []int{1, 2}, r.retries)
}

func TestDoStopsAtMaxAttempts(t *testing.T) {
	var r recorder
	calls := 0
	err := Do(context.Background(), r.policy(), failing(&calls, e503, e503, e503, e503, e503))
	var ae *errs.ApiError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 503, ae.Status)
	assert.Contains(t, err.Error(), "after 4 attempts")
	assert.Equal(t, 4, calls)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, r.sleeps)
}

func TestDoNeverRetriesPermanent(t *testing.T) {
	for _, err := range []error{&errs.ApiError{Status: 404}, &errs.ApiError{Status: 401}, errs.ErrCorrupted} {
		var r recorder
		calls := 0
		got := Do(context.Background(), r.policy(), failing(&calls, err))
		assert.ErrorIs(t, got, err)
		assert.Equal(t, 1, calls)
		assert.Empty(t, r.sleeps)
	}
}

func TestDoHonoursRetryAfter(t *testing.T) {
	var r recorder
	calls := 0
	err := Do(context.Background(), r.policy(), failing(&calls, &errs.ApiError{Status: 429, RetryAfter: "17"}))
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{17 * time.Second}, r.sleeps)
}

func TestDoFailsNowWhenRetryAfterIsBeyondTheCap(t *testing.T) {
	var r recorder
	calls := 0
	err := Do(context.Background(), r.policy(), failing(&calls, &errs.ApiError{Status: 429, RetryAfter: "3600"}))
	assert.ErrorIs(t, err, ErrServerBusy)
	var ae *errs.ApiError
	assert.ErrorAs(t, err, &ae)
	assert.Equal(t, 1, calls)
	assert.Empty(t, r.sleeps)
}

func TestDoBudgetCountsOnlyWaiting(t *testing.T) {
	var r recorder
	p := r.policy()
	p.MaxAttempts = 10
	p.Budget = 6 * time.Second // 1 + 2 fit, the next 4 would not
	calls := 0
	err := Do(context.Background(), p, failing(&calls, e503, e503, e503, e503))
	assert.ErrorAs(t, err, new(*errs.ApiError))
	assert.Equal(t, 3, calls)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Second}, r.sleeps)
}

func TestDoRefusesCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	var r recorder
	err := Do(ctx, r.policy(), failing(&calls))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 0, calls)
}

// TestCancelInterruptsBackoff uses the real sleep with an hour-long delay: a
// cancellation must end the wait at once, or the test would hang.
func TestCancelInterruptsBackoff(t *testing.T) {
	p := Default()
	p.Base, p.Max = time.Hour, time.Hour
	p.Budget = 10 * time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	p.OnRetry = func(error, int, time.Duration) { cancel() }
	calls := 0
	err := Do(ctx, p, failing(&calls, e503, e503))
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, calls)
}

func TestDelay(t *testing.T) {
	p := Default()
	now := time.Now()
	cases := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{1, 0.5, time.Second},
		{2, 0.5, 2 * time.Second},
		{3, 0.5, 4 * time.Second},
		{4, 0.5, 8 * time.Second},
		{5, 0.5, 10 * time.Second}, // capped
		{40, 0.5, 10 * time.Second},
		{1, 0, 500 * time.Millisecond}, // jitter spreads ±50%
		{1, 0.999999, 1499999 * time.Microsecond},
		{5, 0, 5 * time.Second},
	}
	for _, tc := range cases {
		d, ok := p.Delay(tc.attempt, e503, now, tc.r)
		assert.True(t, ok)
		assert.InDelta(t, float64(tc.want), float64(d), float64(time.Microsecond), "attempt %d r %v", tc.attempt, tc.r)
	}
}

func TestOncePolicyNeverRepeats(t *testing.T) {
	calls := 0
	err := Do(context.Background(), Once(), failing(&calls, e503))
	assert.ErrorIs(t, err, e503)
	assert.Equal(t, 1, calls)
	assert.False(t, errors.Is(err, ErrServerBusy))
}

// The budget counts waiting only: attempts that take long (the clock moves
// 30 s during each) do not eat it, so a slow but moving transfer is never
// cut short by the budget.
func TestBudgetCountsOnlyWaiting(t *testing.T) {
	var r recorder
	p := r.policy()
	p.MaxAttempts, p.Base, p.Max, p.Budget = 10, time.Second, time.Second, 2500*time.Millisecond
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p.Now = func() time.Time { return clock }
	calls := 0
	err := Do(context.Background(), p, func(context.Context) error {
		calls++
		clock = clock.Add(30 * time.Second) // a long attempt
		return e503
	})
	require.Error(t, err)
	assert.Equal(t, 3, calls, "two 1 s waits fit a 2.5 s budget, a third does not; attempt time is not counted")
	assert.Equal(t, []time.Duration{time.Second, time.Second}, r.sleeps)
}

func TestOverloadAnswersGetExtraAttempts(t *testing.T) {
	e429 := &errs.ApiError{Status: 429}
	var r recorder
	p := r.policy()
	p.OverloadAttempts = 3
	calls := 0
	// Six overload answers then success: 4 attempts plus 3 extra.
	err := Do(context.Background(), p, failing(&calls, e429, e503, e429, e503, e429, e429))
	require.NoError(t, err)
	assert.Equal(t, 7, calls)

	// Extra attempts are for overload answers only.
	calls = 0
	e500 := &errs.ApiError{Status: 500}
	err = Do(context.Background(), p, failing(&calls, e429, e500, e500, e500, e500))
	require.Error(t, err)
	assert.Equal(t, 5, calls)

	// Without them, a 429 uses up an attempt like any other failure.
	calls = 0
	p.OverloadAttempts = 0
	err = Do(context.Background(), p, failing(&calls, e429, e429, e429, e429))
	require.Error(t, err)
	assert.Equal(t, 4, calls)
}

func TestOverloaded(t *testing.T) {
	assert.True(t, Overloaded(&errs.ApiError{Status: 429}))
	assert.True(t, Overloaded(&errs.ApiError{Status: 503}))
	assert.False(t, Overloaded(&errs.ApiError{Status: 500}))
	assert.False(t, Overloaded(errors.New("x")))
}
