// Package errs holds the typed errors that quak's packages return and that
// retry classification and cmd's exit codes are decided on.
package errs

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrCorrupted reports that encrypted data failed authentication: it was
// damaged or tampered with, or it was encrypted under another key. It is never
// worth retrying, and no plaintext of the failing chunk is ever released.
var ErrCorrupted = errors.New("corrupted or tampered")

// ErrNotLoggedIn reports that there is no usable session: quak has never
// logged in, or the server rejected the stored token.
var ErrNotLoggedIn = errors.New("not logged in")

// ApiError is a non-2xx answer from Ente's API server or its object store.
type ApiError struct {
	Method     string // HTTP method of the request
	Path       string // request path, never the query string (it may hold a token)
	Status     int    // HTTP status code
	Code       string // Ente's error code, such as "NOT_FOUND", when the body had one
	Message    string // a short, single-line excerpt of the body
	RequestID  string // the X-Request-Id header, for reports to the server's operator
	RetryAfter string // the raw Retry-After header, if any
	// ObjectStore is set when the answer came from the object store after
	// museum's redirect, not from museum itself: a 404 there means the row
	// exists but its bytes are gone.
	ObjectStore bool
}

func (e *ApiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: HTTP %d", e.Method, e.Path, e.Status)
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request id %s)", e.RequestID)
	}
	return b.String()
}

// TruncReason says how an encrypted stream failed to end properly.
type TruncReason int

const (
	// NoFinal: the source ended at a chunk boundary before a FINAL chunk.
	NoFinal TruncReason = iota + 1
	// PartialChunk: the source ended in the middle of a chunk.
	PartialChunk
	// TrailingData: bytes followed the FINAL chunk.
	TrailingData
	// ShortOfSize: the FINAL chunk came before the size the server
	// announced for the object.
	ShortOfSize
)

func (r TruncReason) String() string {
	switch r {
	case NoFinal:
		return "ended before the final chunk"
	case PartialChunk:
		return "ended inside a chunk"
	case TrailingData:
		return "has data after the final chunk"
	case ShortOfSize:
		return "ended at its final chunk, short of its announced size,"
	}
	return fmt.Sprintf("TruncReason(%d)", int(r))
}

// TruncatedStreamError reports an encrypted stream that did not end with an
// authenticated FINAL chunk followed by end of input. Got counts the
// ciphertext bytes read and Chunks the chunks that authenticated; Want is the
// expected ciphertext size, or -1 when it was not known.
type TruncatedStreamError struct {
	Reason TruncReason
	Chunks int
	Got    int64
	Want   int64
}

func (e *TruncatedStreamError) Error() string {
	s := fmt.Sprintf("encrypted stream %s after %d chunks, %d bytes", e.Reason, e.Chunks, e.Got)
	if e.Want >= 0 {
		s += fmt.Sprintf(" of %d", e.Want)
	}
	return s
}

// Is makes a 401 answer match ErrNotLoggedIn: the stored session is dead and
// every further call would fail the same way.
func (e *ApiError) Is(target error) bool {
	return target == ErrNotLoggedIn && e.Status == 401
}

// TimeoutError reports that a deadline of quak's own expired: no response
// headers within After of sending the request, or no body byte for After.
type TimeoutError struct {
	Phase string // "response headers" or "response body"
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no %s for %v", e.Phase, e.After)
}

// Timeout reports true, as net.Error timeouts do.
func (e *TimeoutError) Timeout() bool { return true }
