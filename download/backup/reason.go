package backup

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"syscall"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/errs"
)

// Failure reasons: a stable class for each failed file, for monitoring
// (the JSON events and last-run.json carry them; docs/scripting.md lists
// them).
const (
	ReasonAuth        = "auth"        // the server rejected the session or the access
	ReasonServer      = "server"      // the server or object store answered with an error
	ReasonNetwork     = "network"     // connections, resets, timeouts
	ReasonTruncated   = "truncated"   // the encrypted stream ended early or ran long
	ReasonCorrupt     = "corrupt"     // bytes failed authentication, or an unusable archive
	ReasonDisk        = "disk"        // writing to the backup folder failed
	ReasonUnsupported = "unsupported" // something quak cannot handle (a name outside DIR, a format)
	ReasonOther       = "other"       // anything else; the error text says what
)

// Reason classifies why a file failed, from the error's types alone.
func Reason(err error) string {
	var ae *errs.ApiError
	var te *errs.TruncatedStreamError
	var to *errs.TimeoutError
	var oe *net.OpError
	var de *net.DNSError
	var ue *url.Error
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errs.ErrNotLoggedIn):
		return ReasonAuth
	case errors.As(err, &ae):
		if ae.Status == 401 || ae.Status == 403 {
			return ReasonAuth
		}
		return ReasonServer
	case errors.As(err, &te):
		return ReasonTruncated
	case errors.Is(err, errs.ErrCorrupted), errors.Is(err, livephoto.ErrBadArchive):
		return ReasonCorrupt
	case errors.As(err, &to), errors.As(err, &oe), errors.As(err, &de), errors.As(err, &ue),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE):
		return ReasonNetwork
	case errors.Is(err, layout.ErrOutside):
		return ReasonUnsupported
	case errors.As(err, &pe), errors.As(err, &le), isDiskErrno(err):
		return ReasonDisk
	}
	return ReasonOther
}

// isDiskErrno reports the errors a full, read-only or failing disk gives.
func isDiskErrno(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EROFS, syscall.EIO, syscall.EACCES, syscall.EPERM, syscall.ENAMETOOLONG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
