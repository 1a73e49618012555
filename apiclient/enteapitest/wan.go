package enteapitest

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/quak-photos/quak/retry"
)

// WAN makes the fake server answer like a distant one: every request waits
// one round trip before it is handled, each response body is paced to a
// bandwidth (per connection: HTTP/1.1 sends one response at a time on a
// connection), and the API can rate-limit as museum does. The zero value is
// loopback.
type WAN struct {
	// Latency is added to every request, API and object store, before it
	// is handled: one round trip.
	Latency time.Duration
	// Bandwidth caps each response body, in bytes per second (0: no cap).
	Bandwidth int64
	// Sleep is how delays pass. nil sleeps in real time against the
	// request's context, with body pacing on a schedule so timer overshoot
	// does not add up (for benchmarks); tests that assert behaviour pass a
	// Sleep that records and returns at once.
	Sleep func(ctx context.Context, d time.Duration) error
	// APILimit answers an API request that arrives while APILimit others
	// are in flight with museum's 429: {"error":"Rate limit breached, try
	// later"} and no Retry-After (museum's middleware/rate_limit.go sends
	// none). 0: no limit. museum counts requests per second, per user and
	// IP; a cap on requests in flight is that limit for a client whose
	// requests take a round trip each.
	APILimit int
	// StoreLimit answers an object store GET that arrives while StoreLimit
	// others are in flight with 503 SlowDown, as S3 does when a prefix is
	// overloaded (no Retry-After). 0: no limit.
	StoreLimit int
}

// wanState is WAN mode and the requests in flight it counts.
type wanState struct {
	mu       sync.Mutex
	wan      WAN
	storeNow int // object store GETs in flight
	apiNow   int // API requests in flight
	maxStore int
	limited  int // requests WAN mode refused
}

// SetWAN switches WAN mode on (or off, with the zero WAN) for requests that
// arrive from now on.
func (s *Server) SetWAN(w WAN) {
	s.wan.mu.Lock()
	defer s.wan.mu.Unlock()
	s.wan.wan = w
}

// InFlight reports the most object store GETs that were in flight at once,
// and how many requests WAN mode answered 429 or 503.
func (s *Server) InFlight() (maxStore int, limited int) {
	s.wan.mu.Lock()
	defer s.wan.mu.Unlock()
	return s.wan.maxStore, s.wan.limited
}

// ResetInFlight forgets the highest count InFlight reported.
func (s *Server) ResetInFlight() {
	s.wan.mu.Lock()
	defer s.wan.mu.Unlock()
	s.wan.maxStore, s.wan.limited = s.wan.storeNow, 0
}

// RateLimited is museum's 429: its fixed body and no Retry-After.
func RateLimited() Fault {
	return Fault{kind: faultStatus, status: http.StatusTooManyRequests, body: `{"error":"` + rateLimited.Message + `"}`}
}

// enter counts the request in flight and says whether WAN mode refuses
// it; leave must be called when it ends.
func (ws *wanState) enter(r *http.Request) (w WAN, refuse Fault, refused bool, leave func()) {
	store := strings.HasPrefix(r.URL.Path, "/store/") && r.Method == "GET"
	ws.mu.Lock()
	defer ws.mu.Unlock()
	w = ws.wan
	if store {
		ws.storeNow++
		ws.maxStore = max(ws.maxStore, ws.storeNow)
	} else {
		ws.apiNow++
	}
	leave = func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		if store {
			ws.storeNow--
		} else {
			ws.apiNow--
		}
	}
	switch {
	case !store && w.APILimit > 0 && ws.apiNow > w.APILimit:
		ws.limited++
		return w, RateLimited(), true, leave
	case store && w.StoreLimit > 0 && ws.storeNow > w.StoreLimit:
		ws.limited++
		return w, StatusBody(http.StatusServiceUnavailable, "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"), true, leave
	}
	return w, Fault{}, false, leave
}

func (w WAN) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if w.Sleep != nil {
		return w.Sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}

// pacedWriter sends a response body no faster than the WAN's bandwidth.
type pacedWriter struct {
	http.ResponseWriter
	w     WAN
	ctx   context.Context
	start time.Time
	sent  int64
}

// paceSlice is how many bytes go out between two waits.
const paceSlice = 32 << 10

func (p *pacedWriter) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), paceSlice)
		m, err := p.ResponseWriter.Write(b[:k])
		n += m
		if err != nil {
			return n, err
		}
		p.sent += int64(m)
		if p.w.Sleep != nil {
			err = p.w.Sleep(p.ctx, time.Duration(float64(m)/float64(p.w.Bandwidth)*float64(time.Second)))
		} else {
			_ = http.NewResponseController(p.ResponseWriter).Flush()
			var wait time.Duration
			wait, p.start = paceWait(p.sent, p.w.Bandwidth, p.start, time.Now())
			err = p.w.sleep(p.ctx, wait)
		}
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

func (p *pacedWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// paceSlack is the most a paced body may be behind its link: a body its
// client left unread for a while (busy, or waiting) is then sent at the
// link's rate, not at once, as a real link would, which banks no time.
const paceSlack = 128 << 10

// paceWait is how long a body paced at bw bytes a second, started at
// start, waits at now once sent bytes are out; and the start to pace
// from, moved on when the body is more than paceSlack behind.
func paceWait(sent, bw int64, start, now time.Time) (time.Duration, time.Time) {
	at := func(n int64) time.Duration { return time.Duration(float64(n) / float64(bw) * float64(time.Second)) }
	due, slack := at(sent), at(paceSlack)
	if behind := now.Sub(start) - due; behind > slack {
		start = start.Add(behind - slack)
	}
	return due - now.Sub(start), start
}

// throughWAN applies WAN mode, and a Gate's hold, around each request.
func (s *Server) throughWAN(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w, leave, ok := s.enterWAN(w, r)
		defer leave()
		if ok {
			h.ServeHTTP(w, r)
		}
	})
}

// enterWAN applies WAN mode, and a Gate's hold, to a request; it returns
// false when the request was refused or the client went away during the
// round trip.
func (s *Server) enterWAN(w http.ResponseWriter, r *http.Request) (http.ResponseWriter, func(), bool) {
	mode, refuse, refused, leave := s.wan.enter(r)
	answered, held := s.hold(r)
	if !held {
		leave()
		return w, func() {}, false
	}
	inFlight := leave
	leave = func() {
		inFlight()
		answered()
	}
	if err := mode.sleep(r.Context(), mode.Latency); err != nil {
		leave()
		return w, func() {}, false
	}
	if refused {
		s.applyFault(w, r, refuse, nil)
		leave()
		return w, func() {}, false
	}
	if mode.Bandwidth > 0 {
		w = &pacedWriter{ResponseWriter: w, w: mode, ctx: r.Context(), start: time.Now()}
	}
	return w, leave, true
}
