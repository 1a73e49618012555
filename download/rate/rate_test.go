package rate

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTime is a clock that moves only when the limiter sleeps.
type fakeTime struct {
	t     time.Time
	slept time.Duration
}

func (f *fakeTime) now() time.Time { return f.t }

func (f *fakeTime) sleep(_ context.Context, d time.Duration) error {
	f.t = f.t.Add(d)
	f.slept += d
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
