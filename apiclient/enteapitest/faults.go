package enteapitest

import (
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"

	"github.com/quak-photos/quak/apiclient/enteapitest/wire"
)

// Fault is one scripted misbehaviour, applied to one request of a route.
// Build them with the functions below.
type Fault struct {
	kind       faultKind
	header     []byte
	n          int64
	status     int
	retryAfter string
	body       string
	release    <-chan struct{}
}

type faultKind int

const (
	faultPass faultKind = iota
	faultStatus
	faultStallHeaders
	faultStallBody
	faultReset
	faultCut
	faultFlip
	faultDeclare
	faultLoseResponse
	faultIgnoreRange
	faultShiftRange
	faultHold
	faultStaleHeader
	faultDrop
)

// Pass lets one request through untouched (to script "fail, pass, fail").
func Pass() Fault { return Fault{kind: faultPass} }

// Status answers with status and museum's empty error body.
func Status(status int) Fault { return Fault{kind: faultStatus, status: status, body: "{}"} }

// StatusBody answers with status and the given body.
func StatusBody(status int, body string) Fault {
	return Fault{kind: faultStatus, status: status, body: body}
}

// RetryAfter answers with status (429 or 503) and a Retry-After header.
func RetryAfter(status int, after string) Fault {
	return Fault{kind: faultStatus, status: status, retryAfter: after, body: `{"error":"Rate limit breached, try later"}`}
}

// StallHeaders never sends response headers; the request hangs until the
// client gives up or the server closes.
func StallHeaders() Fault { return Fault{kind: faultStallHeaders} }

// StallAfter sends n body bytes, then nothing more until the client gives up.
func StallAfter(n int64) Fault { return Fault{kind: faultStallBody, n: n} }

// ResetAfter sends n body bytes, then resets the TCP connection.
func ResetAfter(n int64) Fault { return Fault{kind: faultReset, n: n} }

// CutAfter ends the body cleanly after n bytes, with a Content-Length of n:
// what a proxy that truncates an object looks like.
func CutAfter(n int64) Fault { return Fault{kind: faultCut, n: n} }

// FlipAt flips the low bit of body byte n.
func FlipAt(n int64) Fault { return Fault{kind: faultFlip, n: n} }

// DeclareLength sends Content-Length n whatever the body's real length.
func DeclareLength(n int64) Fault { return Fault{kind: faultDeclare, n: n} }

// LoseResponse lets the server act on the request, then resets the
// connection before the answer: the client cannot tell whether it worked.
func LoseResponse() Fault { return Fault{kind: faultLoseResponse} }

// Drop resets the connection without acting on the request: the client
// cannot tell it from LoseResponse, which acted.
func Drop() Fault { return Fault{kind: faultDrop} }

// IgnoreRange serves the whole object with 200, as a store that does not
// honour Range would.
func IgnoreRange() Fault { return Fault{kind: faultIgnoreRange} }

// ShiftRange answers a ranged request with 206 from n bytes after the
// offset asked for (before it, for negative n): a store or proxy that
// serves the wrong part of the object.
func ShiftRange(n int64) Fault { return Fault{kind: faultShiftRange, n: n} }

// Hold keeps the request waiting until release is closed (or the client
// gives up), then serves it: a test can look at what else the client does
// meanwhile.
func Hold(release <-chan struct{}) Fault { return Fault{kind: faultHold, release: release} }

// StaleThumbnailHeader answers GET /collections/file as a stale read
// would: the file as it is now, but with the thumbnail header old.
func StaleThumbnailHeader(old []byte) Fault { return Fault{kind: faultStaleHeader, header: old} }

// Repeat is f, n times.
func Repeat(f Fault, n int) []Fault {
	out := make([]Fault, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// faults are the faults queued per route, the chaos that picks one for
// any other request, and the hook told of each stall.
type faults struct {
	mu      sync.Mutex
	queued  map[string][]Fault
	chaos   func(route string) (Fault, bool)
	onStall func(key string, body bool)
}

func newFaults() *faults { return &faults{queued: map[string][]Fault{}} }

// next pops the next fault queued for route.
func (fs *faults) next(route string) (Fault, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	q := fs.queued[route]
	if len(q) == 0 {
		return Fault{}, false
	}
	fs.queued[route] = q[1:]
	return q[0], true
}

// pick is the fault for a request of route: the next queued, else what
// chaos picks (called without the lock).
func (fs *faults) pick(route string) (Fault, bool) {
	if f, ok := fs.next(route); ok {
		return f, true
	}
	fs.mu.Lock()
	chaos := fs.chaos
	fs.mu.Unlock()
	if chaos == nil {
		return Fault{}, false
	}
	return chaos(route)
}

// withFaults applies the fault picked for each request's route, if any.
func (s *Server) withFaults(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f, ok := s.faults.pick(r.Method + " " + r.URL.Path); ok {
			s.applyFault(w, r, f, h)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Inject queues faults for route ("METHOD /path", no query): each matching
// request takes the next one, and once they are used up requests pass.
func (s *Server) Inject(route string, faults ...Fault) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.queued[route] = append(s.faults.queued[route], faults...)
}

// ClearFaults drops the faults still queued for route.
func (s *Server) ClearFaults(route string) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	delete(s.faults.queued, route)
}

// SetChaos has choose pick a fault (or none) for every request that has no
// scripted fault: randomized soaks. It is called outside the server's lock,
// one request at a time or concurrently, as requests arrive.
func (s *Server) SetChaos(choose func(route string) (Fault, bool)) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.chaos = choose
}

// SetStallHook calls hook (nil: none) each time a fault starts stalling a
// request, with the request's RequestKey and whether it stalls the body
// (after headers were sent) or the headers: a soak's fake clock then fires the deadline that stall
// meets, and a fault that never stalls (a body shorter than its stall
// point) fires nothing.
func (s *Server) SetStallHook(hook func(key string, body bool)) {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.onStall = hook
}

func (s *Server) stall(r *http.Request, body bool) {
	// Read the request body first: net/http notices a client that hangs up
	// (and ends r.Context()) only once the body is consumed.
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 64<<20))
	s.faults.mu.Lock()
	hook := s.faults.onStall
	s.faults.mu.Unlock()
	if hook != nil {
		hook(RequestKey(r), body)
	}
	select {
	case s.Stalled <- r.Method + " " + r.URL.Path:
	default:
	}
	<-r.Context().Done()
}

func (s *Server) applyFault(w http.ResponseWriter, r *http.Request, f Fault, h http.Handler) {
	switch f.kind {
	case faultPass:
		h.ServeHTTP(w, r)
	case faultStatus:
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(f.body))
	case faultStallHeaders:
		s.stall(r, false)
	case faultHold:
		select {
		case <-f.release:
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	case faultLoseResponse:
		h.ServeHTTP(httptest.NewRecorder(), r)
		resetConnection(w)
	case faultDrop:
		resetConnection(w)
	case faultStaleHeader:
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var out struct {
			File wire.File `json:"file"`
		}
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &out) != nil {
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
			return
		}
		out.File.Thumbnail.DecryptionHeader = b64(f.header)
		writeJSON(w, 200, out)
	case faultIgnoreRange:
		r.Header.Set("X-Fake-Ignore-Range", "1")
		h.ServeHTTP(w, r)
	case faultShiftRange:
		if from, to, ok := rangeOf(r.Header.Get("Range")); ok {
			end := ""
			if to >= 0 {
				end = strconv.FormatInt(max(to+f.n, 0), 10)
			}
			r.Header.Set("Range", "bytes="+strconv.FormatInt(max(from+f.n, 0), 10)+"-"+end)
		}
		h.ServeHTTP(w, r)
	default:
		h.ServeHTTP(&faultWriter{ResponseWriter: w, r: r, s: s, f: f}, r)
	}
}

// errFaultDone stops a handler's writes once a fault has ended the body.
var errFaultDone = errors.New("enteapitest: body ended by a fault")

// faultWriter applies a body fault to whatever the handler writes.
type faultWriter struct {
	http.ResponseWriter
	r           *http.Request
	s           *Server
	f           Fault
	written     int64
	done        bool
	wroteHeader bool
}

func (fw *faultWriter) WriteHeader(status int) {
	if fw.wroteHeader {
		return
	}
	fw.wroteHeader = true
	switch fw.f.kind {
	case faultCut:
		fw.Header().Set("Content-Length", strconv.FormatInt(fw.f.n, 10))
	case faultDeclare:
		fw.Header().Set("Content-Length", strconv.FormatInt(fw.f.n, 10))
	}
	fw.ResponseWriter.WriteHeader(status)
}

func (fw *faultWriter) Write(p []byte) (int, error) {
	if !fw.wroteHeader {
		fw.WriteHeader(http.StatusOK)
	}
	if fw.done {
		return 0, errFaultDone
	}
	switch fw.f.kind {
	case faultFlip:
		if off := fw.f.n - fw.written; off >= 0 && off < int64(len(p)) {
			q := append([]byte(nil), p...)
			q[off] ^= 1
			p = q
		}
	case faultCut, faultStallBody, faultReset:
		if rest := fw.f.n - fw.written; rest < int64(len(p)) {
			n, _ := fw.ResponseWriter.Write(p[:max(rest, 0)])
			fw.written += int64(n)
			fw.done = true
			fw.finish()
			return n, errFaultDone
		}
	}
	n, err := fw.ResponseWriter.Write(p)
	fw.written += int64(n)
	return n, err
}

// finish acts once the body reached the fault's byte count.
func (fw *faultWriter) finish() {
	switch fw.f.kind {
	case faultStallBody:
		_ = http.NewResponseController(fw.ResponseWriter).Flush()
		fw.s.stall(fw.r, true)
	case faultReset:
		_ = http.NewResponseController(fw.ResponseWriter).Flush()
		resetConnection(fw.ResponseWriter)
	}
}

// resetConnection closes the request's connection with a TCP RST.
func resetConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0) // close with RST, not FIN
	}
	conn.Close()
}
