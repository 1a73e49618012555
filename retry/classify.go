// Package retry reruns operations that failed for transient reasons, with
// jittered exponential backoff, and decides in one place which failures are
// transient.
package retry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/quak-photos/quak/errs"
)

// Class is what a failure says about trying again.
type Class int

const (
	// Permanent failures fail the same way every time: a 4xx answer, data
	// that failed authentication, a hash mismatch, a disk error, a bug, and
	// anything quak does not recognise.
	Permanent Class = iota
	// Transient failures may pass on another attempt: 408, 429, 5xx,
	// network failures, quak's own deadlines, and truncated streams.
	Transient
)

func (c Class) String() string {
	if c == Transient {
		return "transient"
	}
	return "permanent"
}

// Classify decides whether err is worth another attempt. It looks through
// the whole Unwrap chain for types and values, never at error text.
//
// A truncated stream is transient. One ambiguity is accepted: without the
// expected size, a damaged or wrongly keyed single short chunk looks like a
// cut one, and is retried until attempts run out.
func Classify(err error) Class {
	if err == nil {
		return Permanent
	}
	var ae *errs.ApiError
	if errors.As(err, &ae) {
		if ae.Status == 408 || ae.Status == 429 || ae.Status >= 500 {
			return Transient
		}
		return Permanent
	}
	if errors.Is(err, errs.ErrCorrupted) || errors.Is(err, errs.ErrNotLoggedIn) || badCertificate(err) {
		return Permanent
	}
	var te *errs.TruncatedStreamError
	var to *errs.TimeoutError
	if errors.As(err, &te) || errors.As(err, &to) {
		return Transient
	}
	if networkFailure(err) {
		return Transient
	}
	return Permanent
}

// networkFailure reports resets, refusals, DNS and TLS failures, timeouts
// and connections closed in the middle of a response.
func networkFailure(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	for _, errno := range []syscall.Errno{
		syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN,
	} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var op *net.OpError
	var dns *net.DNSError
	var rh tls.RecordHeaderError
	if errors.As(err, &op) || errors.As(err, &dns) || errors.As(err, &rh) {
		return true
	}
	// net/http reports a connection closed before any response as a bare
	// io.EOF inside *url.Error.
	var ue *url.Error
	return errors.As(err, &ue) && errors.Is(ue.Err, io.EOF)
}

// badCertificate reports TLS verification failures: retrying cannot fix a
// certificate, and a person needs to see it at once.
func badCertificate(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// Overloaded reports an answer that says the server is overloaded: 429
// (museum's rate limiter) or 503 (an object store's SlowDown).
func Overloaded(err error) bool {
	var ae *errs.ApiError
	return errors.As(err, &ae) && (ae.Status == 429 || ae.Status == 503)
}

// ServerDelay returns how long the server asked quak to wait before trying
// again (a Retry-After of seconds or an HTTP date, relative to now), and
// whether it asked at all.
func ServerDelay(err error, now time.Time) (time.Duration, bool) {
	var ae *errs.ApiError
	if !errors.As(err, &ae) || ae.RetryAfter == "" {
		return 0, false
	}
	if s, perr := strconv.Atoi(ae.RetryAfter); perr == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, perr := http1Date(ae.RetryAfter); perr == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// http1Date parses the date formats HTTP allows (what http.ParseTime does,
// without importing net/http here).
func http1Date(s string) (time.Time, error) {
	var err error
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// Unreachable reports failures to talk to the server at all: a connection
// refused, reset or cut, a name that does not resolve, a timeout. An answer
// from the server, even an error status, is not one.
func Unreachable(err error) bool {
	var ae *errs.ApiError
	if err == nil || errors.As(err, &ae) || badCertificate(err) {
		return false
	}
	var to *errs.TimeoutError
	return errors.As(err, &to) || networkFailure(err)
}

// Refused reports a server that is not there: the connection was refused,
// no route leads to it, or its name does not resolve.
func Refused(err error) bool {
	var ae *errs.ApiError
	if err == nil || errors.As(err, &ae) {
		return false
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN} {
		if errors.Is(err, errno) {
			return true
		}
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}
