package retry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/errs"
)

// wrappings are the shapes an error reaches Classify in: bare, wrapped by
// fmt.Errorf, inside *url.Error as net/http returns it, and joined.
var wrappings = map[string]func(error) error{
	"bare":    func(e error) error { return e },
	"fmt":     func(e error) error { return fmt.Errorf("file 12: %w", e) },
	"twice":   func(e error) error { return fmt.Errorf("album 3: %w", fmt.Errorf("download: %w", e)) },
	"url":     func(e error) error { return &url.Error{Op: "Get", URL: "https://x/files/download/1", Err: e} },
	"joined":  func(e error) error { return errors.Join(errors.New("cleanup also failed"), e) },
	"url+fmt": func(e error) error { return fmt.Errorf("x: %w", &url.Error{Op: "Get", URL: "u", Err: e}) },
}

func TestClassify(t *testing.T) {
	api := func(status int) error { return &errs.ApiError{Method: "GET", Path: "/p", Status: status} }
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"408", api(408), Transient},
		{"429", api(429), Transient},
		{"500", api(500), Transient},
		{"502", api(502), Transient},
		{"503", api(503), Transient},
		{"400", api(400), Permanent},
		{"401", api(401), Permanent},
		{"403", api(403), Permanent},
		{"404", api(404), Permanent},
		{"410", api(410), Permanent},
		{"426 storage full", api(426), Permanent},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, Transient},
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Transient},
		{"bare errno reset", syscall.ECONNRESET, Transient},
		{"broken pipe", syscall.EPIPE, Transient},
		{"dns", &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}, Transient},
		{"tls record", tls.RecordHeaderError{Msg: "bad record"}, Transient},
		{"unexpected EOF", io.ErrUnexpectedEOF, Transient},
		{"quak headers deadline", &errs.TimeoutError{Phase: "response headers", After: time.Second}, Transient},
		{"quak body deadline", &errs.TimeoutError{Phase: "response body", After: time.Second}, Transient},
		{"net timeout", &net.OpError{Op: "read", Err: timeoutErr{}}, Transient},
		{"truncated", &errs.TruncatedStreamError{Reason: errs.NoFinal, Want: -1}, Transient},
		{"trailing data", &errs.TruncatedStreamError{Reason: errs.TrailingData, Want: -1}, Transient},
		{"corrupted", fmt.Errorf("secretstream: chunk 3: %w", errs.ErrCorrupted), Permanent},
		{"not logged in", errs.ErrNotLoggedIn, Permanent},
		{"bad certificate", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, Permanent},
		{"hostname mismatch", x509.HostnameError{Host: "h"}, Permanent},
		{"disk full", &fs.PathError{Op: "write", Path: "/b/x.partial", Err: syscall.ENOSPC}, Permanent},
		{"permission", &fs.PathError{Op: "open", Path: "/b", Err: fs.ErrPermission}, Permanent},
		{"unknown", errors.New("something odd"), Permanent},
		{"canceled", context.Canceled, Permanent},
	}
	for _, tc := range cases {
		for wname, wrap := range wrappings {
			t.Run(tc.name+"/"+wname, func(t *testing.T) {
				assert.Equal(t, tc.want, Classify(wrap(tc.err)))
			})
		}
	}
	assert.Equal(t, Permanent, Classify(nil))
}

// A bare io.EOF is a bug somewhere, except inside *url.Error, where net/http
// uses it for a connection closed before the response.
func TestClassifyEOF(t *testing.T) {
	assert.Equal(t, Permanent, Classify(io.EOF))
	assert.Equal(t, Transient, Classify(&url.Error{Op: "Get", URL: "u", Err: io.EOF}))
}

func TestNotLoggedInMatches401(t *testing.T) {
	err := fmt.Errorf("collections: %w", &errs.ApiError{Status: 401})
	assert.ErrorIs(t, err, errs.ErrNotLoggedIn)
	assert.NotErrorIs(t, &errs.ApiError{Status: 403}, errs.ErrNotLoggedIn)
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestServerDelay(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(s string) error { return fmt.Errorf("w: %w", &errs.ApiError{Status: 429, RetryAfter: s}) }
	cases := []struct {
		err   error
		want  time.Duration
		asked bool
	}{
		{at("7"), 7 * time.Second, true},
		{at("0"), 0, true},
		{at(now.Add(90 * time.Second).Format(time.RFC1123)), 90 * time.Second, true},
		{at(now.Add(-time.Hour).Format(time.RFC1123)), 0, true},
		{at("soon"), 0, false},
		{at("-3"), 0, false},
		{at(""), 0, false},
		{errors.New("x"), 0, false},
	}
	for _, tc := range cases {
		d, asked := ServerDelay(tc.err, now)
		assert.Equal(t, tc.asked, asked, "%v", tc.err)
		assert.Equal(t, tc.want, d, "%v", tc.err)
	}
}

func TestUnreachableAndRefused(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	reset := &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	cases := []struct {
		name                string
		err                 error
		unreachable, refuse bool
	}{
		{"refused", refused, true, true},
		{"no route", syscall.EHOSTUNREACH, true, true},
		{"dns", &net.DNSError{Err: "no such host", Name: "api.example", IsNotFound: true}, true, true},
		{"reset", reset, true, false},
		{"closed before answer", &url.Error{Op: "Get", URL: "u", Err: io.EOF}, true, false},
		{"cut body", io.ErrUnexpectedEOF, true, false},
		{"quak deadline", &errs.TimeoutError{Phase: "response headers", After: time.Second}, true, false},
		{"502 answered", &errs.ApiError{Status: 502}, false, false},
		{"500 answered", &errs.ApiError{Status: 500}, false, false},
		{"truncated stream", &errs.TruncatedStreamError{Reason: errs.NoFinal, Want: -1}, false, false},
		{"bad certificate", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, false, false},
		{"disk full", &fs.PathError{Op: "write", Path: "/b", Err: syscall.ENOSPC}, false, false},
		{"canceled", context.Canceled, false, false},
		{"nil", nil, false, false},
	}
	for _, tc := range cases {
		for wname, wrap := range wrappings {
			if tc.err == nil && wname != "bare" {
				continue
			}
			t.Run(tc.name+"/"+wname, func(t *testing.T) {
				err := tc.err
				if err != nil {
					err = wrap(err)
				}
				assert.Equal(t, tc.unreachable, Unreachable(err), "unreachable")
				assert.Equal(t, tc.refuse, Refused(err), "refused")
			})
		}
	}
}
