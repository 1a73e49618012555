package rate

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTime is a clock that moves only when the limiter sleeps.
type fakeTime struct {
	t      time.Time
	slept  time.Duration
	sleeps []time.Duration
}

func (f *fakeTime) now() time.Time { return f.t }

func (f *fakeTime) sleep(_ context.Context, d time.Duration) error {
	f.t = f.t.Add(d)
	f.slept += d
	f.sleeps = append(f.sleeps, d)
	return nil
}

func TestBytesArriveNoFasterThanTheRate(t *testing.T) {
	for _, size := range []int{1 << 20, 30 << 20} {
		ft := &fakeTime{t: time.Unix(0, 0)}
		l := New(10<<20, ft.now, ft.sleep)
		src := io.NopCloser(bytes.NewReader(make([]byte, size)))
		n, err := io.Copy(io.Discard, l.Reader(context.Background(), src))
		require.NoError(t, err)
		assert.Equal(t, int64(size), n)
		// 10 MiB/s from an empty bucket: size / rate seconds.
		want := time.Duration(float64(size) / float64(10<<20) * float64(time.Second))
		assert.InDelta(t, float64(want), float64(ft.slept), float64(time.Millisecond), "size %d", size)
	}
}

func TestIdleTimeFillsTheBucketUpToOneSecond(t *testing.T) {
	ft := &fakeTime{t: time.Unix(0, 0)}
	l := New(1<<20, ft.now, ft.sleep)
	ft.t = ft.t.Add(time.Hour) // idle: the bucket holds one second, not an hour
	require.NoError(t, l.Wait(context.Background(), 1<<20))
	assert.Zero(t, ft.slept)
	require.NoError(t, l.Wait(context.Background(), 1<<20))
	assert.Equal(t, time.Second, ft.slept)
}

func TestWaitStopsWithItsContext(t *testing.T) {
	l := New(1, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, l.Wait(ctx, 1000), context.Canceled)
}

// A read whose wait is cut short by its context returns the bytes it has
// and the context's error; one that waited in full returns no error.
func TestReaderStopsWithItsContext(t *testing.T) {
	ft := &fakeTime{t: time.Unix(0, 0)}
	sleep := func(ctx context.Context, d time.Duration) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return ft.sleep(ctx, d)
	}
	l := New(4096, ft.now, sleep)
	r := l.Reader(context.Background(), io.NopCloser(bytes.NewReader(make([]byte, 8192))))
	buf := make([]byte, 8192)
	n, err := r.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 4096, n, "at most a sixteenth of a second's worth, and never below 4 KiB")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r = l.Reader(ctx, io.NopCloser(bytes.NewReader(make([]byte, 8192))))
	n, err = r.Read(buf)
	assert.Equal(t, 4096, n)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoError(t, r.Close())
}

// sizedReads records each read's size and the clock time it began at.
type sizedReads struct {
	r     io.Reader
	clock *fakeTime
	sizes []int
	times []time.Time
}

func (s *sizedReads) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.sizes = append(s.sizes, n)
	s.times = append(s.times, s.clock.t)
	return n, err
}

func (s *sizedReads) Close() error { return nil }

// copyAll reads all of r with reads of up to 1 MiB.
func copyAll(t *testing.T, r io.Reader) int64 {
	t.Helper()
	var total int64
	buf := make([]byte, 1<<20)
	for {
		n, err := r.Read(buf)
		total += int64(n)
		if err == io.EOF {
			return total
		}
		require.NoError(t, err)
	}
}

// A download under way when the timetable moves from 1M to 4M goes on at
// 4M from that moment: its reads grow and its waits shrink.
func TestATransferUnderWayChangesRateAtTheBoundary(t *testing.T) {
	ft := &fakeTime{t: at(0, 7, 59, 50)}
	l := NewScheduled(daily(Slot{Rate: 1 << 20}, Slot{Hour: 8, Rate: 4 << 20}), ft.now, ft.sleep)
	src := &sizedReads{r: bytes.NewReader(make([]byte, 30<<20)), clock: ft}
	assert.Equal(t, int64(30<<20), copyAll(t, l.Reader(context.Background(), src)))

	boundary := at(0, 8, 0, 0)
	var before int
	for i, n := range src.sizes {
		if src.times[i].Before(boundary) {
			before += n
			assert.LessOrEqual(t, n, 64<<10, "a sixteenth of a second at 1M")
		} else {
			assert.LessOrEqual(t, n, 256<<10, "a sixteenth of a second at 4M")
		}
	}
	assert.Equal(t, 10<<20, before, "10 s at 1 MiB/s before 08:00")
	assert.Contains(t, src.sizes, 256<<10, "reads grow after 08:00")
	// 10 MiB in 10 s, then 20 MiB at 4 MiB/s: 15 s, where 1M all along
	// would take 30 s.
	assert.InDelta(t, float64(15*time.Second), float64(ft.slept), float64(time.Millisecond))
	assert.True(t, ft.t.Equal(at(0, 8, 0, 5)), "clock at %v", ft.t)
}

// A transfer that reaches "off" stops waiting at that moment and its reads
// are no longer cut up.
func TestATransferUnderWayIsFreedWhenTheLimitGoesOff(t *testing.T) {
	ft := &fakeTime{t: at(0, 22, 59, 58)}
	l := NewScheduled(daily(Slot{Hour: 8, Rate: 1 << 20}, Slot{Hour: 23}), ft.now, ft.sleep)
	src := &sizedReads{r: bytes.NewReader(make([]byte, 10<<20)), clock: ft}
	assert.Equal(t, int64(10<<20), copyAll(t, l.Reader(context.Background(), src)))
	assert.Equal(t, 2*time.Second, ft.slept, "2 MiB at 1M, then no wait")
	assert.True(t, ft.t.Equal(at(0, 23, 0, 0)))
	assert.Equal(t, 1<<20, src.sizes[len(src.sizes)-2], "whole reads once off")
}

// One wait across a boundary sleeps until it, then pays the rest at the
// new rate; a wait that reaches "off" ends there.
func TestAWaitAcrossABoundary(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  int64
		sleeps []time.Duration
	}{
		{"faster", 4 << 20, []time.Duration{time.Second, time.Second / 2}},
		{"slower", 512 << 10, []time.Duration{time.Second, 4 * time.Second}},
		{"off", 0, []time.Duration{time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ft := &fakeTime{t: at(0, 7, 59, 59)}
			l := NewScheduled(daily(Slot{Rate: 1 << 20}, Slot{Hour: 8, Rate: tc.after}), ft.now, ft.sleep)
			require.NoError(t, l.Wait(context.Background(), 3<<20))
			assert.Equal(t, tc.sleeps, ft.sleeps)
		})
	}
}

// After a time without limit the bucket holds one second of the new rate,
// no more.
func TestTheBucketAfterAnOffPeriod(t *testing.T) {
	ft := &fakeTime{t: at(0, 7, 0, 0)}
	l := NewScheduled(daily(Slot{Rate: 1 << 20}, Slot{Hour: 8}, Slot{Hour: 9, Rate: 2 << 20}), ft.now, ft.sleep)
	ft.t = at(0, 8, 30, 0)
	require.NoError(t, l.Wait(context.Background(), 100<<20))
	assert.Zero(t, ft.slept, "off: no wait")
	ft.t = at(0, 9, 0, 0)
	require.NoError(t, l.Wait(context.Background(), 2<<20))
	assert.Zero(t, ft.slept)
	require.NoError(t, l.Wait(context.Background(), 2<<20))
	assert.Equal(t, time.Second, ft.slept)
}

// A limiter made while the timetable says none waits for nothing then,
// and begins full when a limit begins: as after any time without one.
func TestALimiterMadeWhileOffBeginsFullWhenALimitBegins(t *testing.T) {
	ft := &fakeTime{t: at(0, 7, 0, 0)}
	l := NewScheduled(daily(Slot{Hour: 8, Rate: 1 << 20}, Slot{Hour: 9}), ft.now, ft.sleep)
	require.NoError(t, l.Wait(context.Background(), 100<<20))
	assert.Zero(t, ft.slept, "off: no wait")
	ft.t = at(0, 8, 0, 0)
	require.NoError(t, l.Wait(context.Background(), 1<<20))
	assert.Zero(t, ft.slept, "full at the limit's start")
	require.NoError(t, l.Wait(context.Background(), 1<<20))
	assert.Equal(t, time.Second, ft.slept)
}

// Idle time counts at the rate of each part of it: an hour at 1M then a
// minute at 4M leaves a second of 4M in the bucket; ten seconds of 1M
// after a full bucket of 4M leaves a second of 1M.
func TestIdleTimeAcrossABoundaryFillsAtEachRate(t *testing.T) {
	ft := &fakeTime{t: at(0, 7, 0, 0)}
	l := NewScheduled(daily(Slot{Rate: 1 << 20}, Slot{Hour: 8, Rate: 4 << 20}, Slot{Hour: 9, Rate: 1 << 20}), ft.now, ft.sleep)
	ft.t = at(0, 8, 1, 0)
	require.NoError(t, l.Wait(context.Background(), 4<<20))
	assert.Zero(t, ft.slept)

	ft.t = at(0, 8, 59, 59)
	require.NoError(t, l.Wait(context.Background(), 0)) // the bucket full at 4M
	ft.t = at(0, 9, 0, 10)
	require.NoError(t, l.Wait(context.Background(), 1<<20))
	assert.Zero(t, ft.slept)
	require.NoError(t, l.Wait(context.Background(), 1<<20))
	assert.Equal(t, time.Second, ft.slept)
}

// A debt left below a nanosecond's worth of bytes ends the wait: it is
// not slept off in waits of no time.
func TestAWaitEndsWhenWhatIsLeftIsBelowANanosecond(t *testing.T) {
	ft := &fakeTime{t: time.Unix(0, 0)}
	sleep := func(ctx context.Context, d time.Duration) error {
		if len(ft.sleeps) == 10 {
			return errors.New("slept 10 times")
		}
		return ft.sleep(ctx, d)
	}
	l := New(3, ft.now, sleep) // 1 byte is 333333333.3 ns
	require.NoError(t, l.Wait(context.Background(), 1))
	assert.Equal(t, []time.Duration{333333333}, ft.sleeps)
}
