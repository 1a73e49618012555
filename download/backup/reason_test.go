package backup

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/errs"
)

func TestReason(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("file 7: after 4 attempts: %w", err) }
	for _, c := range []struct {
		err  error
		want string
	}{
		{&errs.ApiError{Status: 401}, ReasonAuth},
		{&errs.ApiError{Status: 403}, ReasonAuth},
		{&errs.ApiError{Status: 503}, ReasonServer},
		{&errs.ApiError{Status: 404, ObjectStore: true}, ReasonServer},
		{&errs.TruncatedStreamError{Reason: errs.NoFinal}, ReasonTruncated},
		{errs.ErrCorrupted, ReasonCorrupt},
		{livephoto.ErrBadArchive, ReasonCorrupt},
		{&errs.TimeoutError{Phase: "response body"}, ReasonNetwork},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, ReasonNetwork},
		{io.ErrUnexpectedEOF, ReasonNetwork},
		{layout.ErrOutside, ReasonUnsupported},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.ENOSPC}, ReasonDisk},
		{&os.LinkError{Op: "rename", Err: syscall.ENAMETOOLONG}, ReasonDisk},
		{syscall.EROFS, ReasonDisk},
		{errors.New("something new"), ReasonOther},
	} {
		if got := Reason(wrap(c.err)); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
	if Reason(nil) != "" {
		t.Error("nil has a reason")
	}
}
