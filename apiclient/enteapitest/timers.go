package enteapitest

import (
	"net/http"
	"sync"
	"time"

	"github.com/quak-photos/quak/apiclient"
)

// Timers is a fake clock for apiclient.Deadlines: its timers fire only when
// the test calls Fire, so deadline tests never wait for real time.
type Timers struct {
	mu      sync.Mutex
	armed   map[*fakeTimer]bool
	pending map[time.Duration]int
	arming  chan struct{} // a value each time a timer is armed
}

// NewTimers returns a fake clock with no timers armed.
func NewTimers() *Timers {
	return &Timers{armed: map[*fakeTimer]bool{}, pending: map[time.Duration]int{}, arming: make(chan struct{}, 1)}
}

type fakeTimer struct {
	t   *Timers
	d   time.Duration
	c   chan time.Time
	key string // RequestKey of its request, when made by For
}

// RequestKey names a request as both sides see it: its method, path and
// Range ("GET /store/1/file-2 bytes=0-99"), so parallel ranges of one
// object are told apart.
func RequestKey(r *http.Request) string {
	k := r.Method + " " + r.URL.Path
	if rg := r.Header.Get("Range"); rg != "" {
		k += " " + rg
	}
	return k
}

func (f *fakeTimer) C() <-chan time.Time { return f.c }

// Stop disarms the timer. A fire that nobody received (the waiter took
// other input in the same instant) is carried to the next timer of the same
// duration: a Fire means "the deadline has passed", and some wait must see it.
func (f *fakeTimer) Stop() bool {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	was := f.t.armed[f]
	delete(f.t.armed, f)
	if !was {
		select {
		case <-f.c:
			f.t.pending[f.d]++
		default:
		}
	}
	return was
}

// New arms a timer of duration d; use it as Deadlines.NewTimer.
func (t *Timers) New(d time.Duration) apiclient.Timer { return t.arm(d, "") }

// For arms a timer of duration d for req, which FireFor can expire alone;
// use it as Deadlines.TimerFor.
func (t *Timers) For(req *http.Request, d time.Duration) apiclient.Timer {
	return t.arm(d, RequestKey(req))
}

func (t *Timers) arm(d time.Duration, key string) apiclient.Timer {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := &fakeTimer{t: t, d: d, c: make(chan time.Time, 1), key: key}
	if t.pending[d] > 0 {
		t.pending[d]--
		f.c <- time.Time{}
		return f
	}
	t.armed[f] = true
	select {
	case t.arming <- struct{}{}:
	default:
	}
	return f
}

// FireFor expires the armed timers of duration d made by For for the
// request named key (RequestKey), waiting at most bound for one to be
// armed: only the stalled request's deadline passes, whatever else is in
// flight.
func (t *Timers) FireFor(key string, d, bound time.Duration) bool {
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		fired := t.expire(func(f *fakeTimer) bool { return f.d == d && f.key == key })
		t.mu.Unlock()
		if fired {
			return true
		}
		select {
		case <-t.arming:
		case <-deadline.C:
			return false
		}
	}
}

// expire fires and disarms every armed timer match accepts, reporting
// whether there was one; t.mu is held.
func (t *Timers) expire(match func(*fakeTimer) bool) bool {
	fired := false
	for f := range t.armed {
		if match(f) {
			delete(t.armed, f)
			f.c <- time.Time{}
			fired = true
		}
	}
	return fired
}

// Fire expires every armed timer of duration d; when none is armed, the
// next one armed with d expires at once.
func (t *Timers) Fire(d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.expire(func(f *fakeTimer) bool { return f.d == d }) {
		t.pending[d]++
	}
}
