package cmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/retry"
)

// tempFailRetry is how soon the loop tries again after a run that ended
// 75 (the server could not be reached); each such run in a row doubles it,
// up to --every.
const tempFailRetry = time.Minute

// maxTempFailDoublings caps the doublings, so the shift never overflows:
// tempFailRetry << 10 is about 17 hours.
const maxTempFailDoublings = 10

// jitterShare and maxJitter spread the runs of machines started together:
// each wait grows by up to a tenth of itself, and by at most 5 minutes.
const (
	jitterShare = 10
	maxJitter   = 5 * time.Minute
)

// registerEvery adds backup's --every.
func registerEvery(f *pflag.FlagSet, p *time.Duration) {
	durationVar(f, p, "every", 0, "keep running: back up at once, then again this long after each run started (6h, 1d), until SIGTERM or Ctrl-C; "+
		"a failed run does not end it")
}

// minEvery and maxEvery bound --every: a shorter one (0s among them,
// which would run once) starts backups back to back, a longer one is
// surely a slip (and 274 years or more would not fit a time.Duration).
const (
	minEvery = time.Minute
	maxEvery = 365 * 24 * time.Hour
)

// checkEvery refuses an --every that cannot loop (a negative one is
// refused by the flag itself).
func checkEvery(o *backupOpts) error {
	if o.fs != nil && o.fs.Changed("every") && (o.every < minEvery || o.every > maxEvery) {
		return &usageError{errors.New("--every takes 1 minute (1min) to 1 year (1y): a shorter one would run backups back to back, 0s only once")}
	}
	if o.every > 0 && o.dryRun {
		return &usageError{fmt.Errorf("--every runs backups again and again, and --dry-run writes nothing: leave one out")}
	}
	return nil
}

// nextStart is when the run after one that started at started and ended
// at ended begins: every after started; after the n-th run in a row that
// ended 75 (tempFails = n), sooner: tempFailRetry·2^(n-1) after it, but
// never later than every. jitter, a draw from [0, 1), adds up to a tenth
// of that wait (at most maxJitter). A run that took longer than the wait
// is followed at once, never overlapped.
func nextStart(started, ended time.Time, every time.Duration, tempFails int, jitter float64) time.Time {
	wait := every
	if tempFails > 0 {
		wait = min(every, tempFailRetry<<min(tempFails-1, maxTempFailDoublings))
	}
	if j := time.Duration(jitter * float64(min(wait/jitterShare, maxJitter))); wait <= math.MaxInt64-j {
		wait += j
	} else {
		wait = math.MaxInt64
	}
	if next := started.Add(wait); next.After(ended) {
		return next
	}
	return ended
}

// runEvery runs once again and again, at the times nextStart gives, until
// ctx ends (SIGTERM, Ctrl-C); a run in progress then stops as it would on
// its own, and the loop returns its error. Each run pings, records and
// notifies by itself; a failed one is reported here, loudly, and the loop
// goes on. Nothing of one run is held into the next: idle connections are
// closed, and what --quiet held back is shown (the run failed) or dropped.
func runEvery(ctx context.Context, c *cobra.Command, d deps, o *backupOpts, once func(context.Context, deps) error) error {
	now, pause, jitter := loopClock(d)
	if err := checkLoop(d, o, now()); err != nil {
		return err
	}
	if d.transport == nil {
		// One transport for every run, so no run leaves connections to
		// time out in a transport of its own.
		t := baseTransport()
		defer t.CloseIdleConnections()
		d.transport = t
	}
	tempFails := 0
	for {
		started := now()
		err := once(ctx, d)
		if ctx.Err() != nil {
			return err
		}
		code := exitCodeFor(err)
		if err != nil {
			reportIn(d.stderr, err, c)
		}
		closeIdle(d.transport)
		if code == exitTempFail {
			tempFails++
		} else {
			tempFails = 0
		}
		next := nextStart(started, now(), o.every, tempFails, jitter())
		announceNext(d, o, next, now(), code)
		release(d, err != nil)
		if err := pause(ctx, next.Sub(now())); err != nil {
			return err
		}
	}
}

// checkLoop refuses, before the first run, what would fail every run the
// same way: the flags, the filters, the ping's and the notifications'
// settings. What a run finds (a missing folder, a rejected session) fails
// that run, and the loop goes on.
func checkLoop(d deps, o *backupOpts, now time.Time) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.multi.all && o.init {
		return &usageError{errInitAll}
	}
	if _, err := o.filters.set(now); err != nil {
		return err
	}
	url, err := healthURL(d, o.healthURL, o.healthFile)
	if err == nil {
		_, err = newPinger(d, url, nil)
	}
	if err == nil {
		_, err = newNotifier(d, &o.notify, nil)
	}
	return err
}

// loopClock is the loop's clock, wait and jitter: deps' when given, else
// the real ones.
func loopClock(d deps) (now func() time.Time, pause func(context.Context, time.Duration) error, jitter func() float64) {
	now, pause, jitter = d.now, d.pause, d.jitter
	if now == nil {
		now = time.Now
	}
	if pause == nil {
		pause = retry.Sleep
	}
	if jitter == nil {
		jitter = rand.Float64
	}
	return now, pause, jitter
}

// closeIdle closes the connections a run left idle: they would otherwise
// wait in the pool until the next run, or until they time out.
func closeIdle(t http.RoundTripper) {
	if c, ok := t.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// announceNext says when the next run starts: a line on stderr and, with
// --json, a next-run object.
func announceNext(d deps, o *backupOpts, next, now time.Time, code int) {
	why := ""
	if code == exitTempFail {
		why = ", sooner: the server could not be reached"
	}
	fmt.Fprintf(d.stderr, "quak: next run at %s (in %s%s)\n", next.Format(time.RFC3339), next.Sub(now).Round(time.Second), why)
	if o.json {
		newJSONLines(d).write("next-run", map[string]any{"at": next.UTC().Format(time.RFC3339Nano), "exitCode": code})
	}
}

// release lets out what --quiet held back of the run that just ended, or
// drops it, as a run of its own would at its end.
func release(d deps, show bool) {
	for _, w := range []any{d.stdout, d.stderr} {
		if h, ok := w.(*humanOut); ok {
			h.release(show)
		}
	}
}
