package pace

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// clock is a fake clock the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// round runs one window: limit requests at once, each answered after
// latency, the window lasting span, each moving bytes.
func round(t *testing.T, l *Limiter, c *clock, latency, span time.Duration, bytes int64) {
	t.Helper()
	n := l.Limit()
	slots := make([]*Slot, n)
	for i := range slots {
		s, err := l.Acquire(context.Background())
		require.NoError(t, err)
		slots[i] = s
	}
	c.t = c.t.Add(latency)
	for _, s := range slots {
		s.Answered()
	}
	c.t = c.t.Add(span - latency)
	for _, s := range slots {
		s.Release(OK, bytes)
	}
}

// from4 is an adaptive limiter of cap 32 starting at 4 slots, so that a
// test sees several windows of growth.
func from4(c *clock) *Limiter { return adaptiveFrom(4, 32, c.now) }

func TestGrowsWhileThroughputRisesAndLatencyIsFlat(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := from4(c)
	var limits []int
	for range 8 {
		// A link far from full: every window takes one round trip, so
		// more requests in flight move more bytes per second.
		round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10)
		limits = append(limits, l.Limit())
	}
	assert.Equal(t, []int{6, 9, 13, 19, 28, 32, 32, 32}, limits)
	assert.Equal(t, 32, l.Peak(), "never above the cap")
}

func TestStopsGrowingWhenThroughputIsFlat(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := from4(c)
	round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10) // 4 → 6
	for range 5 {
		// The link is full: the window lasts as long as its bytes take.
		n := l.Limit()
		round(t, l, c, 30*time.Millisecond, time.Duration(n)*20*time.Millisecond, 16<<10)
	}
	assert.Equal(t, 6, l.Limit())
}

func TestShrinksWhenLatencyRises(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := from4(c)
	round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10) // 4 → 6
	round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10) // 6 → 9
	// A queue builds at the server: answers take three times as long.
	round(t, l, c, 90*time.Millisecond, 120*time.Millisecond, 16<<10)
	assert.Equal(t, 8, l.Limit())
	round(t, l, c, 90*time.Millisecond, 120*time.Millisecond, 16<<10)
	assert.Equal(t, 7, l.Limit())
}

func TestHalvesOnceOnABurstOfOverloadAnswers(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := from4(c)
	for range 4 {
		round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10)
	}
	require.Equal(t, 19, l.Limit())
	var slots []*Slot
	for range 19 {
		s, err := l.Acquire(context.Background())
		require.NoError(t, err)
		slots = append(slots, s)
	}
	// Every request in flight is refused: one cut, not nineteen.
	for _, s := range slots {
		s.Release(Overloaded, 0)
	}
	assert.Equal(t, 9, l.Limit())
	// After a cut it grows by one a window.
	round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10)
	assert.Equal(t, 10, l.Limit())
	// A refusal of a request sent after the cut cuts again.
	s, err := l.Acquire(context.Background())
	require.NoError(t, err)
	s.Release(Overloaded, 0)
	assert.Equal(t, 5, l.Limit())
	for range 10 {
		s, err := l.Acquire(context.Background())
		require.NoError(t, err)
		s.Release(Overloaded, 0)
	}
	assert.Equal(t, 1, l.Limit(), "never below one")
}

func TestFixedNeverMoves(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := Fixed(3)
	l.now = c.now
	for range 5 {
		round(t, l, c, 30*time.Millisecond, 60*time.Millisecond, 16<<10)
	}
	assert.Equal(t, 3, l.Limit())
	s, err := l.Acquire(context.Background())
	require.NoError(t, err)
	s.Release(Overloaded, 0)
	assert.Equal(t, 3, l.Limit())
	assert.False(t, l.Adaptive())
}

func TestAcquireWaitsForAFreeSlot(t *testing.T) {
	l := Fixed(1)
	s, err := l.Acquire(context.Background())
	require.NoError(t, err)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	// With no slot free, Acquire waits: here until its context ends.
	_, err = l.Acquire(cancelled)
	assert.ErrorIs(t, err, context.Canceled)
	got := make(chan *Slot)
	go func() {
		s2, _ := l.Acquire(context.Background())
		got <- s2
	}()
	s.Release(OK, 0)
	select {
	case s2 := <-got:
		require.NotNil(t, s2)
	case <-time.After(10 * time.Second):
		t.Fatal("the freed slot was never handed out")
	}
	assert.Equal(t, 1, l.Peak())
}

func TestAdaptiveDefaults(t *testing.T) {
	l := Adaptive(0, nil)
	assert.Equal(t, DefaultMax, l.Max())
	assert.Equal(t, Start, l.Limit())
	assert.Equal(t, 16, Start, "half the cap: a burst museum takes")
	assert.True(t, l.Adaptive())
	assert.Equal(t, 2, Adaptive(2, nil).Limit(), "never starts above its cap")
	assert.Equal(t, 1, Adaptive(1, nil).Max(), "a cap of one is kept")
}

// Latency at exactly Tolerance times the lowest seen is still flat; above
// it, it has risen.
func TestLatencyAtTheToleranceIsFlat(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	l := from4(c)
	round(t, l, c, 20*time.Millisecond, 40*time.Millisecond, 16<<10) // 4 → 6
	round(t, l, c, 30*time.Millisecond, 40*time.Millisecond, 16<<10) // 1.5 ×: 6 → 9
	assert.Equal(t, 9, l.Limit())
	round(t, l, c, 31*time.Millisecond, 40*time.Millisecond, 16<<10) // above: 9 → 8
	assert.Equal(t, 8, l.Limit())
}

func TestAdaptiveDefaultsItsCapAndClock(t *testing.T) {
	l := Adaptive(0, nil)
	assert.Equal(t, DefaultMax, l.Max())
	assert.Equal(t, Start, l.Limit())
	s, err := l.Acquire(context.Background())
	require.NoError(t, err)
	s.Answered()
	s.Release(OK, 1)
	assert.Equal(t, 1, l.Peak())
}
