package cmd

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar is the progress bar quak draws on stderr when it is a terminal. Every
// call into the library holds mu: the library's own lock does not cover
// Clear, so a line printed by one goroutine would race another's Add. The
// library's redraw goroutine is turned off (it reads the bar without its
// lock and never ends); the bar redraws itself every second instead, so its
// rate and time left keep moving while nothing arrives. A nil *bar (no
// terminal, -q) does nothing.
type bar struct {
	mu   sync.Mutex
	pb   *progressbar.ProgressBar
	stop chan struct{} // nil once finished
}

// barEvery is how often at most a bar is drawn as it moves.
var barEvery = 100 * time.Millisecond

// newBar starts a bar toward total (-1: not yet known) on w.
func newBar(w io.Writer, total int64, desc string, more ...progressbar.Option) *bar {
	b := &bar{stop: make(chan struct{})}
	b.pb = progressbar.NewOptions64(total, append([]progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionShowCount(), // also lets a tick redraw an open-ended bar
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(barEvery),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetSpinnerChangeInterval(0),
	}, more...)...)
	go b.redraw(b.stop)
	return b
}

// newByteBar starts a bar of bytes toward a total not yet known, in MiB as
// the summaries say.
func newByteBar(w io.Writer, desc string) *bar {
	return newBar(w, -1, desc, progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
}

func (b *bar) redraw(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			b.tick()
		case <-stop:
			return
		}
	}
}

// tick redraws the bar (after its end: nothing).
func (b *bar) tick() { b.do(func(pb *progressbar.ProgressBar) { _ = pb.Add64(0) }) }

func (b *bar) add(n int64) { b.do(func(pb *progressbar.ProgressBar) { _ = pb.Add64(n) }) }

func (b *bar) setTotal(n int64) { b.do(func(pb *progressbar.ProgressBar) { pb.ChangeMax64(n) }) }

func (b *bar) describe(s string) { b.do(func(pb *progressbar.ProgressBar) { pb.Describe(s) }) }

// above prints line on w (the bar's writer) where the bar was, the bar
// then drawn again below it by its next move. Clearing and printing hold
// the bar, so no draw falls between them. Without a bar, it only prints.
func (b *bar) above(w io.Writer, line string) {
	if b != nil {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.stop != nil {
			_ = b.pb.Clear()
		}
	}
	fmt.Fprintln(w, line)
}

// finish ends the bar and its redraws.
func (b *bar) finish() {
	b.do(func(pb *progressbar.ProgressBar) {
		close(b.stop)
		b.stop = nil
		_ = pb.Finish()
	})
}

// do calls f with the bar held, while the bar has not finished.
func (b *bar) do(f func(*progressbar.ProgressBar)) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		f(b.pb)
	}
}
