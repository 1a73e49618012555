package backup

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/quak-photos/quak/retry"
)

// OutageAfter is how many files in a row may fail to reach the server
// (after their retries) before the run stops: one such file is a blip, a
// few in a row across different files an outage. A refused connection
// stops the run at its first file.
const OutageAfter = 3

// probeTimeout bounds the probe that confirms an outage.
const probeTimeout = 15 * time.Second

// UnreachableError stops a run whose server or object store cannot be
// reached: files not attempted are left for the next run, not failed.
type UnreachableError struct {
	// InARow is how many files or listings in a row failed to connect.
	InARow int
	Err    error
}

func (e *UnreachableError) Error() string {
	cause := e.Err
	var oe *net.OpError
	if errors.As(cause, &oe) {
		cause = oe // names the address, and never a URL with its query
	}
	after := ""
	if e.InARow > 1 {
		after = fmt.Sprintf(" after %d files or listings in a row could not connect", e.InARow)
	}
	return fmt.Sprintf("the server cannot be reached (%v): the run stopped%s", cause, after)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// outage counts connection failures in a row, across files and listings.
type outage struct {
	mu     sync.Mutex
	inARow int
	// answers, when set, asks whether the host a failure could not reach
	// answers at all: one that does is not gone, only some of its objects
	// fail, and those stay failures of their own files.
	answers func(ctx context.Context, rawURL string) bool
}

// observe takes the outcome of one file's download or one listing, after
// its retries. It returns an *UnreachableError when the run should stop:
// the connection was refused, or OutageAfter outcomes in a row failed to
// connect and the host the last one could not reach does not answer a
// probe either. Any other outcome, an error answer included, shows the server
// is there and starts the count again.
func (o *outage) observe(ctx context.Context, err error) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case ctx.Err() != nil:
		return nil // the run is stopping anyway: this says nothing about the server
	case !retry.Unreachable(err):
		o.inARow = 0
		return nil
	}
	o.inARow++
	if retry.Refused(err) {
		return &UnreachableError{InARow: o.inARow, Err: err}
	}
	if o.inARow < OutageAfter {
		return nil
	}
	if o.answers != nil {
		where := ""
		var ue *url.Error
		if errors.As(err, &ue) {
			where = ue.URL
		}
		if o.answers(ctx, where) {
			o.inARow = 0
			return nil
		}
	}
	return &UnreachableError{InARow: o.inARow, Err: err}
}
