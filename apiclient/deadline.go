package apiclient

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quak-photos/quak/errs"
)

// Deadlines are quak's two time limits on a request: one for the response
// headers (connecting included), one for any gap between body bytes. There
// is deliberately no limit on a whole transfer: a 4 GB video that keeps
// moving is never cut, downloaded or uploaded. A request with a body (an
// upload) waits for its answer only once the body is sent; while it is
// sent, the body deadline holds.
type Deadlines struct {
	Headers  time.Duration // default 20 s, long enough for a server's cold start
	BodyIdle time.Duration // default 60 s without a single byte
	// NewTimer makes the timers (tests make ones they fire by hand).
	NewTimer func(time.Duration) Timer
	// TimerFor, when set, makes them instead, told which request each is
	// for: a test's clock can then expire one stalled request's deadline
	// while others are in flight.
	TimerFor func(req *http.Request, d time.Duration) Timer
}

// timers returns the timer maker for req.
func (d Deadlines) timers(req *http.Request) func(time.Duration) Timer {
	if d.TimerFor != nil {
		return func(x time.Duration) Timer { return d.TimerFor(req, x) }
	}
	return d.NewTimer
}

// DefaultDeadlines are 20 s for headers and 60 s of body silence.
func DefaultDeadlines() Deadlines {
	return Deadlines{Headers: 20 * time.Second, BodyIdle: 60 * time.Second, NewTimer: RealTimer}
}

// Timer is the part of *time.Timer the deadlines use.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// RealTimer is a Timer of the real clock.
func RealTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

// NewDeadlineTransport wraps base so that every request obeys d. Both limits
// hold even when base ignores context cancellation: the wait happens here,
// and a timed-out request or body is abandoned and closed.
func NewDeadlineTransport(base http.RoundTripper, d Deadlines) http.RoundTripper {
	if d.NewTimer == nil {
		d.NewTimer = RealTimer
	}
	_, direct := base.(*http.Transport)
	return &deadlineTransport{base: base, d: d, direct: direct}
}

type deadlineTransport struct {
	base http.RoundTripper
	d    Deadlines
	// direct: base is net/http's Transport, whose body reads return as
	// soon as their request is cancelled, so bodies are read straight into
	// the caller's buffer (see idleBody).
	direct bool
}

type roundTrip struct {
	resp *http.Response
	err  error
}

func (t *deadlineTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	req = req.WithContext(ctx) // a copy: its body can be wrapped
	var sending *sendingBody
	if req.Body != nil && req.Body != http.NoBody {
		sending = &sendingBody{rc: req.Body, sent: make(chan struct{})}
		req.Body = sending
	}
	done := make(chan roundTrip, 1)
	go func() {
		resp, err := t.base.RoundTrip(req) //nolint:bodyclose // handed to the caller, or closed by abandon
		done <- roundTrip{resp, err}
	}()
	newTimer := t.d.timers(req)
	phase, wait := "response headers", t.d.Headers
	var sent <-chan struct{}
	if sending != nil {
		phase, wait, sent = "request body", t.d.BodyIdle, sending.sent
	}
	timer := newTimer(wait)
	for {
		select {
		case r := <-done:
			timer.Stop()
			if r.err != nil {
				cancel()
				return nil, r.err
			}
			r.resp.Body = &idleBody{rc: r.resp.Body, cancel: cancel, idle: t.d.BodyIdle, newTimer: newTimer, direct: t.direct}
			return r.resp, nil
		case <-sent:
			timer.Stop()
			sent, phase, wait = nil, "response headers", t.d.Headers
			timer = newTimer(wait)
		case <-timer.C():
			if sent != nil && sending.moved.Swap(false) {
				timer = newTimer(wait) // bytes went out meanwhile: wait again
				continue
			}
			cancel()
			go abandon(done)
			return nil, &errs.TimeoutError{Phase: phase, After: wait}
		case <-req.Context().Done():
			timer.Stop()
			cancel()
			go abandon(done)
			return nil, req.Context().Err()
		}
	}
}

// sendingBody is a request body on its way out: it notes that bytes moved
// and closes sent once the transport has read it all (or closed it). A
// body the transport rewinds through GetBody to send again is not tracked:
// net/http does so only for a body not yet written.
type sendingBody struct {
	rc    io.ReadCloser
	moved atomic.Bool
	once  sync.Once
	sent  chan struct{}
}

func (b *sendingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.moved.Store(true)
	}
	if err != nil {
		b.once.Do(func() { close(b.sent) })
	}
	return n, err
}

func (b *sendingBody) Close() error {
	b.once.Do(func() { close(b.sent) })
	return b.rc.Close()
}

// abandon closes the response of a round trip nobody waits for any more.
func abandon(done <-chan roundTrip) {
	if r := <-done; r.resp != nil {
		r.resp.Body.Close()
	}
}

// idleBody fails a read that sees no byte for BodyIdle. Over net/http's
// Transport (direct), a read goes straight into the caller's buffer and
// the deadline cancels the request, which ends the read at once. Over any
// other transport, reads run in a helper goroutine into a private buffer,
// so a read that never returns is left behind without touching the
// caller's memory; that costs a copy of every byte, a tenth of quak's CPU
// in a backup of large files.
type idleBody struct {
	rc       io.ReadCloser
	cancel   context.CancelFunc
	idle     time.Duration
	newTimer func(time.Duration) Timer
	direct   bool
	err      error
	once     sync.Once

	mu      sync.Mutex
	buf     *[]byte // from idleBuffers, while no timed-out read holds it
	reading bool    // a read into buf is under way (or was left behind)
	closed  bool
}

// idleBuffers are the bodies' private read buffers, shared across
// requests: a run of many ranged requests would otherwise allocate one per
// answer and leave the garbage collector megabytes behind.
var idleBuffers = sync.Pool{New: func() any {
	b := make([]byte, maxIdleRead)
	return &b
}}

type readResult struct {
	n   int
	err error
}

const maxIdleRead = 256 << 10

func (b *idleBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if b.direct {
		return b.readDirect(p)
	}
	// A read left behind by a timeout keeps this buffer: the error is
	// sticky, so it is never used again, and reading stays set, so it is
	// never given back.
	b.mu.Lock()
	if b.buf == nil {
		b.buf = idleBuffers.Get().(*[]byte)
	}
	buf := (*b.buf)[:min(len(p), maxIdleRead)]
	b.reading = true
	b.mu.Unlock()
	ch := make(chan readResult, 1)
	go func() {
		n, err := b.rc.Read(buf)
		ch <- readResult{n, err}
	}()
	timer := b.newTimer(b.idle)
	select {
	case r := <-ch:
		timer.Stop()
		n := copy(p, buf[:r.n])
		if r.err != nil {
			b.err = r.err
		}
		b.mu.Lock()
		b.reading = false
		if b.closed {
			b.release()
		}
		b.mu.Unlock()
		return n, r.err
	case <-timer.C():
		b.err = &errs.TimeoutError{Phase: "response body", After: b.idle}
		b.shutdown()
		return 0, b.err
	}
}

// readDirect reads into p while a watcher waits for the deadline; if it
// passes, the watcher cancels the request, which closes the connection
// under the read. Bytes a cancelled read still returns are the server's
// and are handed on with the timeout.
func (b *idleBody) readDirect(p []byte) (int, error) {
	timer := b.newTimer(b.idle)
	done, fired := make(chan struct{}), make(chan bool, 1)
	go func() {
		select {
		case <-timer.C():
			b.cancel()
			fired <- true
		case <-done:
			fired <- false
		}
	}()
	n, err := b.rc.Read(p)
	close(done)
	if <-fired {
		b.err = &errs.TimeoutError{Phase: "response body", After: b.idle}
		b.shutdown()
		return n, b.err
	}
	timer.Stop()
	return n, err // net/http's body repeats its own error to later reads
}

// release gives the read buffer back; b.mu is held and no read is under way.
func (b *idleBody) release() {
	if b.buf != nil {
		idleBuffers.Put(b.buf)
		b.buf = nil
	}
}

func (b *idleBody) Close() error {
	var err error
	b.once.Do(func() {
		b.cancel()
		err = b.rc.Close()
	})
	b.mu.Lock()
	b.closed = true
	if !b.reading {
		b.release()
	}
	b.mu.Unlock()
	return err
}

// shutdown abandons a stalled body: cancel the request and close it, without
// waiting for the stuck read.
func (b *idleBody) shutdown() {
	b.once.Do(func() {
		b.cancel()
		go b.rc.Close()
	})
}
