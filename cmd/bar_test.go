package cmd

import (
	"errors"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/thumbnails"
)

// Neither a backup's, a restore's nor the thumbnail helper's bar leaves the
// library's own redraw goroutine running: it reads the bar without its lock
// (a data race against the events' Add) and never ends.
func TestBarsStartNoRedrawGoroutine(t *testing.T) {
	var errb, out strings.Builder
	d := deps{stdout: &out, stderr: &errb, stderrIsTerminal: true, g: &globalFlags{}}
	p := newPrinter(d, nil, nil)
	r := newRestoreOutput(d, &restoreOpts{})
	r.startBar(100)
	tp := &thumbPrinter{d: d}
	tp.listed(3)
	require.NotNil(t, p.bar)
	require.NotNil(t, r.bar)
	require.NotNil(t, tp.bar)
	var dump strings.Builder
	require.NoError(t, pprof.Lookup("goroutine").WriteTo(&dump, 2))
	assert.NotContains(t, dump.String(), "progressbar/v3.NewOptions64.func1", "the bar library's redraw goroutine runs")
	p.finish(&backup.Summary{Started: true}, exitOK, nil)
	r.bar.finish()
	tp.finish()
}

// The bar is redrawn at most so often, not on every chunk a download
// adds: 200 events in a burst draw it a few times, never 200.
func TestBarRedrawsAreThrottled(t *testing.T) {
	var errb strings.Builder
	b := newByteBar(&errb, "restoring")
	defer b.finish()
	for range 200 {
		b.add(1 << 10)
	}
	draws := strings.Count(errb.String(), "\r")
	assert.Positive(t, draws)
	assert.Less(t, draws, 100, "the bar was drawn for every event")
}

// A finished bar is taken off its line, so the summary after it starts on
// a clean one; a second finish does nothing.
func TestAFinishedBarIsCleared(t *testing.T) {
	var w strings.Builder
	b := newByteBar(&w, "restoring")
	b.add(1 << 20)
	require.Contains(t, w.String(), "restoring")
	b.finish()
	b.finish()
	out := w.String()
	last := out[strings.LastIndex(out, "restoring"):]
	assert.Regexp(t, regexp.MustCompile(`\r +\r$`), last, "the bar's line is not cleared")
}

// A restore's bar moves between uploads: a tick draws it though no byte
// arrived; it goes toward the bytes to upload, with the percent done.
func TestARestoreBarTickDraws(t *testing.T) {
	every := barEvery
	barEvery = 0 // drawn on every move
	t.Cleanup(func() { barEvery = every })
	var errb, out strings.Builder
	r := newRestoreOutput(deps{stdout: &out, stderr: &errb, stderrIsTerminal: true, g: &globalFlags{}}, &restoreOpts{})
	require.Nil(t, r.currentBar(), "no bar before the run says what it uploads")
	r.startBar(4 << 20)
	defer r.currentBar().finish()
	r.progress(1 << 20)
	r.currentBar().tick()
	assert.Contains(t, errb.String(), "restoring")
	assert.Contains(t, errb.String(), "25%")
}

// Lines printed from one goroutine while another adds to the bar (a retry
// of the thumbnail helper beside a file's event) go through the bar's one
// lock: the race detector finds nothing, and after the end nothing draws.
func TestTheBarIsSharedSafely(t *testing.T) {
	var w lockedWriter
	b := newBar(&w, 400, "checking thumbnails")
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.above(&w, "x")
				b.add(1)
				b.describe("x")
				b.tick()
			}
		}()
	}
	wg.Wait()
	b.finish()
	n := w.len()
	b.add(1)
	b.tick()
	b.finish()
	assert.Equal(t, n, w.len(), "a finished bar drew again")
	b.above(&w, "after")
	assert.True(t, strings.HasSuffix(w.String(), "after\n"), "a finished bar's line is printed")
	var none *bar
	none.add(1) // no terminal: nothing, and no panic
	none.finish()
}

// The thumbnail helper's retry lines, printed by any worker, and its event
// lines each take the bar's place whole: every write to the terminal holds
// the bar (the race detector finds none outside it), and no line is printed
// after a bar drawn between the clearing and the line.
func TestThumbLinesTakeTheBarsPlaceWhole(t *testing.T) {
	every := barEvery
	barEvery = 0 // drawn on every move, so a draw can fall between a clearing and its line
	t.Cleanup(func() { barEvery = every })
	var w strings.Builder // no lock of its own: the bar's is the only one
	tp := &thumbPrinter{d: deps{stderr: &w, stderrIsTerminal: true}}
	tp.listed(1 << 20)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for j := range 500 {
				if i%2 == 0 {
					tp.retry(errors.New("503"), j, time.Second)
				} else {
					tp.event(thumbnails.Event{FileID: int64(j + 1), Class: thumbnails.Lost, Action: thumbnails.Reported, Album: "A", Title: "t.jpg"})
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	tp.finish()
	out := w.String()
	require.Contains(t, out, "quak: attempt")
	require.Contains(t, out, "quak: lost")
	for i := strings.Index(out, "quak: "); i >= 0; {
		require.True(t, i == 0 || out[i-1] == '\n' || out[i-1] == '\r', "a line printed after the bar: %q", out[max(0, i-60):i+6])
		next := strings.Index(out[i+1:], "quak: ")
		if next < 0 {
			break
		}
		i += 1 + next
	}
}

// lockedWriter is a writer many goroutines may share.
type lockedWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func (w *lockedWriter) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Len()
}
