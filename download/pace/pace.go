// Package pace decides how many downloads run at once: a fixed number, or
// one found from the link, grown while throughput rises and latency stays
// flat, and halved when the server says it is overloaded.
package pace

import (
	"context"
	"sync"
	"time"
)

// Limiter hands out slots for requests. Safe for concurrent use.
type Limiter struct {
	mu       sync.Mutex
	wake     chan struct{} // closed and replaced whenever a slot may have freed
	limit    int
	max      int
	fixed    bool
	inFlight int
	peak     int
	now      func() time.Time

	epoch    int // bumped at every cut: answers to older requests do not cut again
	cut      bool
	win      window
	prevRate float64
	baseline time.Duration // the lowest window latency seen
}

// window gathers the completions since the last decision.
type window struct {
	start   time.Time
	done    int
	bytes   int64
	latency time.Duration // sum over done
}

// Start is where an adaptive limiter begins. From 4 (quak's former fixed
// default), a backup of a few hundred files spent a fifth of its time
// growing: against museum over 30 ms and 20 MB/s a connection, 200 × 1 MiB
// took 1.75–2.13 s from 4 and 1.56–1.88 s from 16 (once 2.90 s, in a
// minute when a fixed 32 was slow too), and museum answered no 429 in any
// of those runs. The limiter shrinks from there when answers slow down.
const Start = 16

// DefaultMax caps an adaptive limiter: enough requests in flight to fill a
// 100 Mbit/s link of 16 KiB files 60 ms away, few enough for museum's 700
// requests a second per user.
const DefaultMax = 32

// Tolerance is how much a window's latency may exceed the lowest seen and
// still count as flat.
const Tolerance = 1.5

// Fixed returns a limiter of exactly n slots.
func Fixed(n int) *Limiter {
	n = max(n, 1)
	return &Limiter{limit: n, max: n, fixed: true, wake: make(chan struct{}), now: time.Now}
}

// Adaptive returns a limiter that starts at Start slots and moves between
// 1 and maxSlots (DefaultMax when < 1). now is its clock (nil: time.Now).
func Adaptive(maxSlots int, now func() time.Time) *Limiter {
	if maxSlots < 1 {
		maxSlots = DefaultMax
	}
	if now == nil {
		now = time.Now
	}
	return adaptiveFrom(Start, maxSlots, now)
}

// adaptiveFrom is Adaptive starting at start slots.
func adaptiveFrom(start, maxSlots int, now func() time.Time) *Limiter {
	return &Limiter{limit: min(start, maxSlots), max: maxSlots, wake: make(chan struct{}), now: now}
}

// Adaptive reports whether the limiter moves.
func (l *Limiter) Adaptive() bool { return !l.fixed }

// Limit is how many slots are allowed now.
func (l *Limiter) Limit() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// Peak is the most slots ever held at once.
func (l *Limiter) Peak() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.peak
}

// Max is the most slots the limiter ever allows.
func (l *Limiter) Max() int { return l.max }

// Slot is one request's hold on the limiter.
type Slot struct {
	l       *Limiter
	epoch   int
	started time.Time
	first   time.Duration // time to the answer's headers
	got     bool
}

// Acquire waits for a slot, or for ctx to end.
func (l *Limiter) Acquire(ctx context.Context) (*Slot, error) {
	for {
		l.mu.Lock()
		if l.inFlight < l.limit {
			l.inFlight++
			l.peak = max(l.peak, l.inFlight)
			s := &Slot{l: l, epoch: l.epoch, started: l.now()}
			if l.win.start.IsZero() {
				l.win.start = s.started
			}
			l.mu.Unlock()
			return s, nil
		}
		wake := l.wake
		l.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Answered records that the request's answer (its headers) arrived: the
// latency the limiter watches.
func (s *Slot) Answered() {
	if s == nil || s.got {
		return
	}
	s.got = true
	s.first = s.l.now().Sub(s.started)
}

// Outcome is how a request ended, for the limiter.
type Outcome int

const (
	// OK: the request finished (or failed in a way that says nothing
	// about load: a 404, a cut connection).
	OK Outcome = iota
	// Overloaded: the server answered 429 or 503.
	Overloaded
	// Dropped: the request was given up (cancelled): nothing learned.
	Dropped
)

// Release gives the slot back with what the request moved (body bytes).
func (s *Slot) Release(o Outcome, bytes int64) {
	if s == nil {
		return
	}
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	defer l.signal()
	if l.fixed {
		return
	}
	switch o {
	case Overloaded:
		if s.epoch == l.epoch {
			l.limit = max(1, l.limit/2)
			l.epoch++
			l.cut = true
			l.prevRate = 0
			l.win = window{}
		}
	case OK:
		if !s.got || s.epoch != l.epoch {
			return
		}
		l.win.done++
		l.win.bytes += bytes
		l.win.latency += s.first
		if l.win.done >= l.limit {
			l.decide(l.now())
		}
	}
}

// decide ends a window: grow while throughput rises and latency is flat,
// shrink by one when latency rose, hold otherwise. After a cut the limiter
// grows by one a window, not by half.
func (l *Limiter) decide(now time.Time) {
	w := l.win
	l.win = window{start: now}
	lat := w.latency / time.Duration(w.done)
	if l.baseline == 0 || lat < l.baseline {
		l.baseline = lat
	}
	elapsed := now.Sub(w.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(w.bytes) / elapsed.Seconds()
	}
	flat := float64(lat) <= float64(l.baseline)*Tolerance
	rising := elapsed <= 0 || rate > l.prevRate*1.1
	l.prevRate = rate
	switch {
	case !flat:
		l.limit = max(1, l.limit-1)
	case rising && l.cut:
		l.limit = min(l.max, l.limit+1)
	case rising:
		l.limit = min(l.max, l.limit+max(1, l.limit/2))
	}
}

// signal wakes every waiter; l.mu is held.
func (l *Limiter) signal() {
	close(l.wake)
	l.wake = make(chan struct{})
}
