package pace

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// chunk is one wire chunk's size, as the download package reads them.
const chunk = 4<<20 + 17

// feed reads chunks through w, each taking per, and returns the number of
// ranges w gave after each.
func feed(w *Window, c *clock, chunks int, per time.Duration) []int {
	var got []int
	for range chunks {
		c.t = c.t.Add(per)
		got = append(got, w.Chunk(chunk))
	}
	return got
}

// perRange is how long a chunk takes at n ranges on a link that caps each
// connection at 20 MB/s: twice the ranges, twice the rate.
func perRange(n int) time.Duration {
	return time.Duration(float64(chunk) / (20e6 * float64(n)) * float64(time.Second))
}

// Where each connection is capped, each doubling doubles the rate: the
// number grows 1, 2, 4, 8 and stays at the most allowed.
func TestRangesGrowWhileDoublingPays(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	r := FoundRanges(8, c.now)
	w := r.Window(r.Now())
	var seen []int
	for range 40 {
		n := w.Chunk(chunk)
		c.t = c.t.Add(perRange(n))
		if len(seen) == 0 || seen[len(seen)-1] != n {
			seen = append(seen, n)
		}
	}
	assert.Equal(t, []int{1, 2, 4, 8}, seen)
	assert.Equal(t, 8, r.Now())
	assert.True(t, r.settled, "at the most allowed, nothing more to try")
}

// Where one stream already brings the bytes as fast as they are read (a
// loopback link), twice as many bring nothing: the number goes back to
// one, and stays there whatever later windows measure.
func TestRangesSettleWhereDoublingDoesNotPay(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	r := FoundRanges(8, c.now)
	w := r.Window(1)
	per := 10 * time.Millisecond    // 420 MB/s at any number
	window := int(WindowSpan / per) // chunks a window takes
	got := feed(w, c, 1+window, per)
	assert.Equal(t, 1, got[len(got)-2])
	assert.Equal(t, 2, got[len(got)-1], "the first window measured tries two")
	got = feed(w, c, 2+window, per) // two chunks not counted at two
	assert.Equal(t, 2, got[len(got)-2])
	assert.Equal(t, 1, got[len(got)-1], "two brought nothing more: back to one")
	assert.True(t, r.settled)
	// Later windows, even faster ones, do not move it.
	feed(w, c, 100, per/4)
	assert.Equal(t, 1, r.Now())
}

// A number must bring more than Pays times the rate of half as many: one
// that brings exactly that much is not kept.
func TestRangesMustPayMoreThanPays(t *testing.T) {
	for _, tc := range []struct {
		gain float64
		want int
	}{{Pays, 1}, {Pays + 0.01, 2}} {
		r := FoundRanges(2, nil)
		assert.Equal(t, 2, r.measured(1, 1e6, time.Second))
		assert.Equal(t, tc.want, r.measured(2, int64(tc.gain*1e6), time.Second), "gain %.2f", tc.gain)
	}
}

// A window measured at a number no longer tried (another file's, begun
// before the number moved) changes nothing; nor does an empty one.
func TestRangesIgnoreStaleWindows(t *testing.T) {
	r := FoundRanges(8, nil)
	assert.Equal(t, 2, r.measured(1, 1e6, time.Second))
	assert.Equal(t, 2, r.measured(1, 10e6, time.Second), "measured at one while two is tried")
	assert.Equal(t, 2, r.measured(2, 10e6, 0))
	assert.Equal(t, 4, r.measured(2, 10e6, time.Second))
}

// A window counts neither the n chunks it begins with at n ranges (they
// waited for the new requests' first bytes, or came from what was fetched
// ahead before) nor fewer than WindowChunks chunks or n, nor less than
// WindowSpan: a burst of chunks already in the ring is no rate.
func TestAWindowIsLongEnough(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	r := FoundRanges(8, c.now)
	w := r.Window(1)
	c.t = c.t.Add(time.Hour)
	assert.Equal(t, 1, w.Chunk(chunk), "the first chunk starts the window, whatever it took")
	feed(w, c, WindowChunks-1, WindowSpan)
	assert.Equal(t, 1, r.Now(), "one chunk too few")
	assert.Equal(t, 2, w.Chunk(chunk), "enough chunks and time")

	w = r.Window(2)
	c.t = c.t.Add(time.Hour)
	w.Chunk(chunk)
	w.Chunk(chunk)
	feed(w, c, 2*WindowChunks, WindowSpan/(2*WindowChunks)-time.Nanosecond)
	assert.Equal(t, 2, r.Now(), "enough chunks, too short a time")

	r = FoundRanges(16, c.now)
	r.n, r.below, r.paid = 8, 4, 1 // eight being tried
	w = r.Window(8)
	got := feed(w, c, 8+7, time.Second)
	assert.Equal(t, 8, got[len(got)-1], "eight chunks not counted, then seven too few at eight")
	assert.Equal(t, 16, w.Chunk(chunk), "the eighth counted")
}

// A file whose number another file moved goes on at the new number at its
// next chunk, and measures afresh from there.
func TestAWindowFollowsTheNumber(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	r := FoundRanges(8, c.now)
	a, b := r.Window(1), r.Window(1)
	feed(a, c, 1+WindowChunks, WindowSpan)
	assert.Equal(t, 2, r.Now())
	assert.Equal(t, 2, b.Chunk(chunk))
	assert.Equal(t, 2, b.skip, "its window starts again")
}

// A fixed number never moves, and one found up to one is one.
func TestFixedRangesNeverMove(t *testing.T) {
	c := &clock{t: time.Unix(0, 0)}
	r := FixedRanges(8)
	w := r.Window(8)
	assert.Equal(t, []int{8, 8, 8, 8, 8, 8, 8, 8, 8, 8}, feed(w, c, 10, time.Second))
	assert.False(t, r.Found())
	assert.Equal(t, 1, FixedRanges(0).Now())
	one := FoundRanges(1, c.now)
	feed(one.Window(1), c, 20, time.Second)
	assert.Equal(t, 1, one.Now())
	assert.True(t, FoundRanges(8, nil).Found())
	assert.Equal(t, 8, FoundRanges(8, nil).Max())
}
