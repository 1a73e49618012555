package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// damagedBackup is a backup of 60 files in three albums, every fifth also
// in a second album (a hard link), a live photo and a file kept with a
// hash mismatch, damaged every way verify tells apart. It returns the
// problems by kind that verify must find.
func damagedBackup(t *testing.T) (*fix, map[Kind]int) {
	t.Helper()
	fx := newFix(t)
	albums := []*enteapitest.Album{fx.u.AddAlbum("A"), fx.u.AddAlbum("B"), fx.u.AddAlbum("C")}
	name := func(i int) string { return fmt.Sprintf("%02d.jpg", i) }
	for i := 0; i < 60; i++ {
		f := albums[i%3].AddFile(enteapitest.FileSpec{Title: name(i), Size: int64(1 + i*997%70000), Seed: byte(i)})
		if i%5 == 0 {
			albums[(i+1)%3].Add(f)
		}
	}
	albums[0].AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("image"), "mov", []byte("video"))})
	albums[1].AddFile(enteapitest.FileSpec{Title: "odd.jpg", Size: 100, Hash: "Ym9ndXMgaGFzaA=="})
	fx.backup(t)

	at := func(i int, album string) string { return filepath.Join(fx.dir, album, name(i)) }
	home := func(i int) string { return at(i, "ABC"[i%3:i%3+1]) }
	flip := func(p string, off int) {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		b[off%len(b)] ^= 1
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	for _, i := range []int{3, 11, 41, 43} {
		flip(home(i), i*31)
	}
	flip(filepath.Join(fx.dir, "A", "live.mov"), 2)
	require.NoError(t, os.Truncate(home(47), 10))
	for _, i := range []int{7, 30} {
		require.NoError(t, os.Remove(home(i)))
	}
	require.NoError(t, os.Remove(home(50)))
	require.NoError(t, os.Mkdir(home(50), 0o755)) // not a regular file: missing
	for _, i := range []int{10, 20} {
		// Album (i+1)%3's copy is no longer a link to the first.
		p := at(i, "ABC"[(i+1)%3:(i+1)%3+1])
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.WriteFile(p, b, 0o644))
	}
	for _, p := range []string{filepath.Join("A", "stray.txt"), filepath.Join("C", "notes.jpg")} {
		require.NoError(t, os.WriteFile(filepath.Join(fx.dir, p), []byte("mine"), 0o644))
	}
	return fx, map[Kind]int{Changed: 6, Missing: 3, Unlinked: 2, Extra: 2, Mismatch: 1}
}

// run is one verify run with the concurrency given, at a fixed time.
func (fx *fix) run(t *testing.T, concurrency int) (*Summary, []Problem) {
	t.Helper()
	var got []Problem
	sum, err := Run(context.Background(), Options{Dir: fx.dir, Concurrency: concurrency,
		Now:    func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
		Events: func(p Problem) { got = append(got, p) }})
	require.NoError(t, err)
	sum.Duration = 0
	return sum, got
}

// Whatever the concurrency, verify finds the same problems and reports
// them in the same order: extra files first, then file by file in id
// order, each file's albums and parts in order.
func TestEveryConcurrencyFindsTheSameInTheSameOrder(t *testing.T) {
	fx, want := damagedBackup(t)
	first, _ := fx.run(t, 1)
	assert.Equal(t, 62, first.Unverified, "a first run has checked nothing before")

	ref, problems := fx.run(t, 1)
	assert.Equal(t, want, ref.Problems)
	assert.Equal(t, 62, ref.Total)
	assert.Equal(t, 62, ref.Checked)
	assert.Len(t, ref.Redownload, 6+3+1, "the changed, missing and mismatched files")
	var last int64
	for i, p := range problems {
		if p.Kind == Extra {
			assert.Zero(t, last, "problem %d, %+v, comes after a file's", i, p)
			continue
		}
		assert.GreaterOrEqual(t, p.FileID, last, "problem %d, %+v, is out of file order", i, p)
		last = p.FileID
	}

	for _, n := range []int{2, 3, 8, 100} {
		sum, got := fx.run(t, n)
		assert.Equal(t, ref, sum, "concurrency %d", n)
		assert.Equal(t, problems, got, "concurrency %d", n)
	}
}

// gated holds each read of a file until the test opens the file's gate,
// and counts the reads under way: from the open until the close.
type gated struct {
	mu                   sync.Mutex
	gates                map[string]chan struct{} // by file name
	active, most, opened int
}

func newGated(names ...string) *gated {
	g := &gated{gates: map[string]chan struct{}{}}
	for _, n := range names {
		g.gates[n] = make(chan struct{})
	}
	return g
}

func (g *gated) open(name string) (io.ReadCloser, error) {
	g.mu.Lock()
	g.active++
	g.opened++
	g.most = max(g.most, g.active)
	gate := g.gates[filepath.Base(name)]
	g.mu.Unlock()
	if gate != nil {
		<-gate
	}
	f, err := os.Open(name)
	if err != nil {
		g.end()
		return nil, err
	}
	return gatedFile{f, g}, nil
}

func (g *gated) end() {
	g.mu.Lock()
	g.active--
	g.mu.Unlock()
}

// counts are the reads under way, the most at once, and all begun.
func (g *gated) counts() (active, most, opened int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.active, g.most, g.opened
}

type gatedFile struct {
	*os.File
	g *gated
}

func (f gatedFile) Close() error {
	f.g.end()
	return f.File.Close()
}

// smallBackup is a backup of n files of 10 bytes in one album, named
// 000.jpg… in id order.
func smallBackup(t *testing.T, n int) (*fix, []string) {
	t.Helper()
	fx := newFix(t)
	a := fx.u.AddAlbum("A")
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("%03d.jpg", i))
		a.AddFile(enteapitest.FileSpec{Title: names[i], Size: 10, Seed: byte(i)})
	}
	fx.backup(t)
	return fx, names
}

// runIn starts verify in the background, for a synctest bubble.
func runIn(ctx context.Context, o Options) (wait func() (*Summary, error)) {
	var sum *Summary
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		sum, err = Run(ctx, o)
	}()
	return func() (*Summary, error) {
		<-done
		return sum, err
	}
}

// No more than --concurrency files are read at once, and that many are:
// once every worker is held up, nothing else starts reading.
func TestAtMostConcurrencyFilesAreReadAtOnce(t *testing.T) {
	fx, names := smallBackup(t, 12)
	for _, c := range []struct{ concurrency, want int }{{3, 3}, {1, 1}, {0, min(runtime.NumCPU(), 12)}, {20, 12}} {
		t.Run(fmt.Sprintf("concurrency=%d", c.concurrency), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := newGated(names...)
				wait := runIn(context.Background(), Options{Dir: fx.dir, Concurrency: c.concurrency, open: g.open})
				for i, name := range names {
					synctest.Wait()
					active, _, _ := g.counts()
					assert.Equal(t, min(c.want, len(names)-i), active, "after %d files", i)
					close(g.gates[name])
				}
				sum, err := wait()
				require.NoError(t, err)
				assert.Equal(t, len(names), sum.Checked)
				_, most, opened := g.counts()
				assert.Equal(t, c.want, most)
				assert.Equal(t, len(names), opened)
			})
		})
	}
}

// Problems are reported in file order even when the files' reads end in
// the reverse order: nothing is reported before the first file's read
// ends.
func TestReportsKeepFileOrderWhicheverReadEndsFirst(t *testing.T) {
	fx, names := smallBackup(t, 6)
	for _, name := range names {
		p := filepath.Join(fx.dir, "A", name)
		require.NoError(t, os.WriteFile(p, []byte("0123456789"), 0o644))
	}
	synctest.Test(t, func(t *testing.T) {
		g := newGated(names...)
		var mu sync.Mutex
		var got []string
		wait := runIn(context.Background(), Options{Dir: fx.dir, Concurrency: len(names), open: g.open,
			Events: func(p Problem) {
				mu.Lock()
				got = append(got, filepath.Base(p.Path))
				mu.Unlock()
			}})
		for i := len(names) - 1; i > 0; i-- {
			close(g.gates[names[i]])
			synctest.Wait()
			mu.Lock()
			assert.Empty(t, got, "reported before the first file was read")
			mu.Unlock()
		}
		close(g.gates[names[0]])
		sum, err := wait()
		require.NoError(t, err)
		assert.Equal(t, names, got)
		assert.Equal(t, len(names), sum.Problems[Changed])
	})
}

// While one file is still being read, the workers read at most maxAhead
// files past it: the looks waiting for their turn are bounded.
func TestReadsAheadOfASlowFileAreBounded(t *testing.T) {
	fx, names := smallBackup(t, maxAhead+10)
	synctest.Test(t, func(t *testing.T) {
		g := newGated(names[0])
		wait := runIn(context.Background(), Options{Dir: fx.dir, Concurrency: 2, open: g.open})
		synctest.Wait()
		_, _, opened := g.counts()
		assert.Equal(t, 1+maxAhead, opened)
		close(g.gates[names[0]])
		sum, err := wait()
		require.NoError(t, err)
		assert.Equal(t, len(names), sum.Checked)
	})
}

// A cancelled run judges no file read meanwhile: it returns the
// cancellation, having checked and recorded only the files before it.
func TestACancelledRunJudgesNothingReadMeanwhile(t *testing.T) {
	fx, names := smallBackup(t, 6)
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		g := newGated(names...)
		var reported []Problem
		wait := runIn(ctx, Options{Dir: fx.dir, Concurrency: 2, open: g.open, Events: func(p Problem) { reported = append(reported, p) }})
		close(g.gates[names[0]])
		close(g.gates[names[1]])
		synctest.Wait() // 000 and 001 judged; 002 and 003 held
		cancel()
		for _, name := range names[2:] {
			close(g.gates[name])
		}
		sum, err := wait()
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, 2, sum.Checked)
		assert.Equal(t, int64(20), sum.Bytes)
		assert.Empty(t, reported)
	})
	st, err := folder.At(fx.dir).OpenStateReadOnly()
	require.NoError(t, err)
	defer func() { _ = st.Close() }()
	when, err := st.Verified()
	require.NoError(t, err)
	assert.Len(t, when, 2, "only the files judged are recorded as checked")
}

// A cancelled run stops reading a file part-way, however long it is.
func TestACancelledRunStopsReadingAtOnce(t *testing.T) {
	fx, _ := smallBackup(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	reads := 0
	endless := readerFunc(func(p []byte) (int, error) {
		reads++
		if reads > 100 {
			return 0, errors.New("read on after the run was cancelled")
		}
		cancel()
		return len(p), nil
	})
	_, err := Run(ctx, Options{Dir: fx.dir, Concurrency: 1,
		open: func(string) (io.ReadCloser, error) { return io.NopCloser(endless), nil }})
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, reads)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// Two files whose album copies were hard-linked together by hand are read
// once, even by two workers at the same time: the second waits for the
// first's hash.
func TestAnInodeTwoFilesShareIsReadOnce(t *testing.T) {
	fx := newFix(t)
	a := fx.u.AddAlbum("A")
	for _, name := range []string{"x.jpg", "y.jpg"} {
		a.AddFile(enteapitest.FileSpec{Title: name, Size: 1000, Seed: 5})
	}
	fx.backup(t)
	y := filepath.Join(fx.dir, "A", "y.jpg")
	require.NoError(t, os.Remove(y))
	require.NoError(t, os.Link(filepath.Join(fx.dir, "A", "x.jpg"), y))
	synctest.Test(t, func(t *testing.T) {
		g := newGated("x.jpg", "y.jpg")
		g.gates["y.jpg"] = g.gates["x.jpg"] // one gate for both
		var reported []Problem
		wait := runIn(context.Background(), Options{Dir: fx.dir, Concurrency: 2, open: g.open, Events: func(p Problem) { reported = append(reported, p) }})
		synctest.Wait()
		_, _, opened := g.counts()
		assert.Equal(t, 1, opened, "the second file waits for the first's read")
		close(g.gates["x.jpg"])
		sum, err := wait()
		require.NoError(t, err)
		assert.Equal(t, 2, sum.Checked)
		assert.Equal(t, int64(1000), sum.Bytes)
		assert.Empty(t, reported)
	})
}

// A read that failed is not remembered for the inode: the file's other
// album copy, the same inode, is read again and found intact.
func TestAFailedReadIsTriedAgainForTheNextLink(t *testing.T) {
	fx := newFix(t)
	f := fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 1000, Seed: 5})
	fx.u.AddAlbum("B").Add(f)
	fx.backup(t)
	failed := false
	var got []Problem
	sum, err := Run(context.Background(), Options{Dir: fx.dir, Concurrency: 1,
		Events: func(p Problem) { got = append(got, p) },
		open: func(name string) (io.ReadCloser, error) {
			if !failed {
				failed = true
				return nil, errors.New("input/output error")
			}
			return os.Open(name)
		}})
	require.NoError(t, err)
	assert.Equal(t, []Problem{{Kind: Changed, FileID: f.ID, Path: filepath.Join("A", "x.jpg"), Detail: "unreadable: input/output error"}}, got)
	assert.Equal(t, int64(1000), sum.Bytes)
}
