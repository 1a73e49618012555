package pace

import (
	"sync"
	"time"
)

// Ranges decides how many ranges of one large file are fetched at once: a
// fixed number, or one found from the link. Several ranges pay where one
// connection cannot carry what the link can (an object store that caps
// each connection, a long fat link); where one connection already brings
// the bytes as fast as they are decrypted (loopback, a LAN), they cost
// time and memory and bring nothing. So a found number starts at one (one
// stream), and as files report the rate they came at, it doubles while
// doubling raised the rate by more than Pays, and settles on the last
// number that paid. Safe for concurrent use.
type Ranges struct {
	mu      sync.Mutex
	n       int
	max     int
	fixed   bool
	settled bool
	below   int     // the number tried before n
	paid    float64 // the rate at below: what n must beat, 0 before any
	now     func() time.Time
}

// Pays is how much faster than half as many ranges a number must bring a
// file for it to be kept: more than the noise of a machine under load, far
// less than the two times twice as many connections bring where each is
// capped.
const Pays = 1.25

// WindowChunks and WindowSpan are how long a file is measured at a number
// of ranges n: at least max(WindowChunks, n) chunks and WindowSpan, after n
// chunks that are not counted: they waited for the new requests' first
// bytes, or came from what the ranges before had fetched ahead.
const (
	WindowChunks = 4
	WindowSpan   = 200 * time.Millisecond
)

// FixedRanges returns Ranges of always n (at least 1).
func FixedRanges(n int) *Ranges {
	n = max(n, 1)
	return &Ranges{n: n, max: n, fixed: true, now: time.Now}
}

// FoundRanges returns Ranges found from the link, from 1 up to maxRanges.
// now is its clock (nil: time.Now).
func FoundRanges(maxRanges int, now func() time.Time) *Ranges {
	if now == nil {
		now = time.Now
	}
	return &Ranges{n: 1, max: max(maxRanges, 1), now: now}
}

// Now is how many ranges a file is fetched as now (1: one stream).
func (r *Ranges) Now() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Max is the most ranges it ever gives.
func (r *Ranges) Max() int { return r.max }

// Found reports whether the number is found from the link.
func (r *Ranges) Found() bool { return !r.fixed }

// measured takes the rate a file came at, at n ranges, and returns how
// many it goes on with. A rate measured at another number than the one
// being tried now (another file's, measured before a change) tells
// nothing.
func (r *Ranges) measured(n int, bytes int64, d time.Duration) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.settled || n != r.n || d <= 0 {
		return r.n
	}
	rate := float64(bytes) / d.Seconds()
	if r.paid == 0 || rate > r.paid*Pays {
		r.paid = rate
		if r.n >= r.max {
			r.settled = true
			return r.n
		}
		r.below, r.n = r.n, min(2*r.n, r.max)
		return r.n
	}
	r.n, r.settled = r.below, true // twice as many brought nothing: back
	return r.n
}

// Window measures one file's rate at a number of ranges, chunk by chunk.
// Not safe for concurrent use: one file's reader feeds it.
type Window struct {
	r      *Ranges
	n      int
	skip   int // chunks still not counted
	start  time.Time
	chunks int
	bytes  int64
}

// Window starts measuring a file fetched at n ranges.
func (r *Ranges) Window(n int) *Window { return &Window{r: r, n: n, skip: max(n, 1)} }

// Chunk records that a chunk of size bytes was read whole, and returns how
// many ranges the file goes on with: n, or another number once a window
// is measured and the number moved (the window then starts again at it).
func (w *Window) Chunk(size int64) int {
	if w.r.fixed {
		return w.n
	}
	if n := w.r.Now(); n != w.n { // another file moved the number
		*w = *w.r.Window(n)
		return n
	}
	now := w.r.now()
	if w.skip > 0 {
		w.skip--
		w.start = now
		return w.n
	}
	w.chunks++
	w.bytes += size
	if d := now.Sub(w.start); w.chunks >= max(WindowChunks, w.n) && d >= WindowSpan {
		if n := w.r.measured(w.n, w.bytes, d); n != w.n {
			*w = *w.r.Window(n)
		} else {
			w.start, w.chunks, w.bytes = now, 0, 0
		}
	}
	return w.n
}
