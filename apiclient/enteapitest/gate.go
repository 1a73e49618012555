package enteapitest

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// TB is the part of testing.TB a Gate reports through.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Cleanup(func())
}

// GateBound is how long a Gate's script waits for requests to arrive, or
// to be answered, before it fails the test: long enough that only a
// regression meets it (10 s was once met by a 4 MiB range answered under
// the race detector on a 2-core machine at a load of 10, 1 run in 200),
// short enough that a regression fails within a minute instead of
// hanging.
const GateBound = 60 * time.Second

// Gate holds the requests it matches as they arrive, until its script lets
// each one go: a test orders what the server sees by handshakes, never by
// timers. A held request is in flight (InFlight counts it, and WAN mode has
// already decided whether to refuse it) and has not yet taken its fault
// (Inject), so the script decides which request meets which fault and how
// many are in flight at once.
type Gate struct {
	t     TB
	match func(key string) bool
	bound time.Duration

	mu      sync.Mutex
	changed chan struct{} // closed and replaced whenever the held requests change
	held    []*heldRequest
	open    bool // holds nothing more
	failed  bool
	most    int
	done    chan struct{} // closed once the script has returned
}

// gateSlot is the one Gate a server may have at a time.
type gateSlot struct {
	mu   sync.Mutex
	gate *Gate
}

// heldRequest is one request a Gate holds.
type heldRequest struct {
	key      string
	release  chan struct{} // closed to let it go
	answered chan struct{} // closed once the server has answered it
}

// NewGate holds, from now on, every request of s whose RequestKey match
// accepts, and runs script on its own goroutine to let them go. When script
// returns, or one of its waits runs out (GateBound), the gate lets every
// request go and holds none after; a wait that ran out fails t. The test's
// cleanup waits for script. Script runs outside the test's goroutine: it
// reports through assert, never require. One gate per server at a time.
func NewGate(t TB, s *Server, match func(key string) bool, script func(g *Gate)) *Gate {
	t.Helper()
	return newGate(t, s, match, GateBound, script)
}

// newGate is NewGate with its bound.
func newGate(t TB, s *Server, match func(key string) bool, bound time.Duration, script func(g *Gate)) *Gate {
	t.Helper()
	g := &Gate{t: t, match: match, bound: bound, changed: make(chan struct{}), done: make(chan struct{})}
	s.gates.mu.Lock()
	if s.gates.gate != nil {
		s.gates.mu.Unlock()
		panic("enteapitest: a gate is already holding this server's requests")
	}
	s.gates.gate = g
	s.gates.mu.Unlock()
	t.Cleanup(func() {
		<-g.done // bounded: so is every wait of the script
		s.gates.mu.Lock()
		s.gates.gate = nil
		s.gates.mu.Unlock()
	})
	go func() {
		defer close(g.done)
		defer g.Open()
		script(g)
	}()
	return g
}

// Await waits until n requests are held, and returns the keys of the first
// n of them, in the order they arrived.
func (g *Gate) Await(n int) []string {
	var keys []string
	g.wait(fmt.Sprintf("%d requests held", n), func() bool {
		if len(g.held) < n {
			return false
		}
		for _, h := range g.held[:n] {
			keys = append(keys, h.key)
		}
		return true
	})
	return keys
}

// Release lets go, for each key in turn, the earliest held request with
// that key, waiting for one to arrive if none is held yet.
func (g *Gate) Release(keys ...string) {
	for _, k := range keys {
		g.take(k)
	}
}

// Serve lets go a request with key, as Release does, and waits until the
// server has answered it: the next request let go meets the next fault
// queued for their route.
func (g *Gate) Serve(key string) {
	h := g.take(key)
	if h == nil {
		return
	}
	g.wait("the answer to "+key, func() bool {
		select {
		case <-h.answered:
			return true
		default:
			return false
		}
	})
}

// Open lets every held request go and holds none after.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.openLocked()
}

// Most is the most requests the gate held at once.
func (g *Gate) Most() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// take waits for a held request with key and lets it go; nil when the
// wait ran out.
func (g *Gate) take(key string) *heldRequest {
	var h *heldRequest
	g.wait(key+" held", func() bool {
		i := slices.IndexFunc(g.held, func(h *heldRequest) bool { return h.key == key })
		if i < 0 {
			return false
		}
		h = g.held[i]
		g.held = slices.Delete(g.held, i, i+1)
		close(h.release)
		g.signal()
		return true
	})
	return h
}

// wait calls ready, with g.mu held, until it reports true, or until the
// gate has waited its bound for it (then the test fails and the gate
// opens). It reports whether ready did; once the gate failed, it returns
// false at once.
func (g *Gate) wait(what string, ready func() bool) bool {
	var timeout <-chan time.Time
	for {
		g.mu.Lock()
		if g.failed {
			g.mu.Unlock()
			return false
		}
		if ready() {
			g.mu.Unlock()
			return true
		}
		changed := g.changed
		g.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(g.bound)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-changed:
		case <-timeout:
			g.mu.Lock()
			g.failed = true
			g.t.Errorf("enteapitest: gate waited %v for %s; held: %q", g.bound, what, g.keysLocked())
			g.openLocked()
			g.mu.Unlock()
			return false
		}
	}
}

// openLocked lets every held request go; g.mu is held.
func (g *Gate) openLocked() {
	g.open = true
	for _, h := range g.held {
		close(h.release)
	}
	g.held = nil
	g.signal()
}

// signal wakes every wait; g.mu is held.
func (g *Gate) signal() {
	close(g.changed)
	g.changed = make(chan struct{})
}

func (g *Gate) keysLocked() []string {
	keys := make([]string, len(g.held))
	for i, h := range g.held {
		keys[i] = h.key
	}
	return keys
}

// hold keeps r while s's gate holds it. It returns false when the client
// gave up meanwhile, and a function to call once r is answered.
func (s *Server) hold(r *http.Request) (answered func(), ok bool) {
	s.gates.mu.Lock()
	g := s.gates.gate
	s.gates.mu.Unlock()
	nothing := func() {}
	if g == nil {
		return nothing, true
	}
	key := RequestKey(r)
	g.mu.Lock()
	if g.open || !g.match(key) {
		g.mu.Unlock()
		return nothing, true
	}
	h := &heldRequest{key: key, release: make(chan struct{}), answered: make(chan struct{})}
	g.held = append(g.held, h)
	g.most = max(g.most, len(g.held))
	g.signal()
	g.mu.Unlock()
	answered = func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		close(h.answered)
		g.signal()
	}
	select {
	case <-h.release:
		return answered, true
	case <-r.Context().Done():
		g.mu.Lock()
		if i := slices.Index(g.held, h); i >= 0 {
			g.held = slices.Delete(g.held, i, i+1)
			g.signal()
		}
		g.mu.Unlock()
		return nothing, false
	}
}
