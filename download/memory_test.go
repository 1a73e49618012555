package download_test

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/pace"
)

// heldBodies answers as its client does, but each body's first read tells
// entered and then waits for open to close.
type heldBodies struct {
	download.Objects
	entered chan<- int64
	open    <-chan struct{}
}

func (h heldBodies) DownloadFile(ctx context.Context, id int64) (*apiclient.Object, error) {
	obj, err := h.Objects.DownloadFile(ctx, id)
	if err == nil {
		obj.Body = &heldBody{ReadCloser: obj.Body, h: h, id: id}
	}
	return obj, err
}

type heldBody struct {
	io.ReadCloser
	h    heldBodies
	id   int64
	read bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		b.h.entered <- b.id
		<-b.h.open
	}
	return b.ReadCloser.Read(p)
}

// wait receives from ch, or fails the test after a bound.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		require.FailNow(t, "never happened: "+what)
	}
	var zero T
	return zero
}

func TestBodiesWaitForMemoryNotTheirRequests(t *testing.T) {
	// A cap of 16 KiB, files of 10 KiB: each weighs its share, a quarter
	// of the cap, so four bodies are read at once, and the other six have
	// their answers and wait for memory, not for a slot.
	t.Run("its share", func(t *testing.T) { bodiesUnderCap(t, 16<<10, 10<<10) })
	// The default cap, 6 MiB: four bodies of 1.4 MiB, not five.
	t.Run("the default", func(t *testing.T) { bodiesUnderCap(t, 0, 1400<<10) })
}

func bodiesUnderCap(t *testing.T, memory, size int64) {
	const files = 10
	fx := setup(t)
	var fs []*enteapitest.File
	for i := range files {
		fs = append(fs, fx.album.AddFile(enteapitest.FileSpec{Title: "p.jpg", Size: size, Seed: byte(i)}))
	}
	entered, waited, open := make(chan int64, files), make(chan struct{}, files), make(chan struct{})
	defer download.OnMemoryWait(func() { waited <- struct{}{} })()
	fe := fx.fetcher()
	fe.Client = heldBodies{Objects: fx.client, entered: entered, open: open}
	fe.Pace = pace.Fixed(files)
	fe.Memory = memory

	var g errgroup.Group
	got := make([]*download.Partial, files)
	for i, f := range fs {
		tg := fx.target(f)
		g.Go(func() (err error) {
			got[i], err = fe.Fetch(context.Background(), tg, fx.dir)
			return err
		})
	}
	for range download.MinDownloads {
		wait(t, entered, "a body read")
	}
	for range files - download.MinDownloads {
		wait(t, waited, "a download waiting for memory")
	}
	select {
	case id := <-entered:
		t.Fatalf("file %d's body was read beyond the memory cap", id)
	default:
	}
	close(open)
	done := make(chan error, 1)
	go func() { done <- g.Wait() }()
	require.NoError(t, wait(t, done, "every download's end"))
	for i, p := range got {
		b, err := os.ReadFile(p.Path())
		require.NoError(t, err)
		assert.Equal(t, fs[i].Plaintext(), b, "file %d", i)
		p.Discard()
	}
	assert.Len(t, entered, files-download.MinDownloads, "every other body read once memory was free")
}

func TestOneDownloadNeverWaitsForMemory(t *testing.T) {
	// A cap smaller than one file's chunk still lets it through.
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "p.jpg", Size: 64 << 10, Seed: 3})
	waits := 0
	defer download.OnMemoryWait(func() { waits++ })()
	fe := fx.fetcher()
	fe.Memory = 1
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // a bound, should it wait
	defer cancel()
	p, err := fe.Fetch(ctx, fx.target(f), fx.dir)
	require.NoError(t, err)
	defer p.Discard()
	b, err := os.ReadFile(p.Path())
	require.NoError(t, err)
	assert.Equal(t, f.Plaintext(), b)
	assert.Zero(t, waits)
}

func TestADownloadWaitingForMemoryStopsWhenCancelled(t *testing.T) {
	const files = download.MinDownloads + 1
	fx := setup(t)
	entered, waited, open := make(chan int64, files), make(chan struct{}, files), make(chan struct{})
	defer download.OnMemoryWait(func() { waited <- struct{}{} })()
	fe := fx.fetcher()
	fe.Client = heldBodies{Objects: fx.client, entered: entered, open: open}
	fe.Pace = pace.Fixed(files)
	fe.Memory = 16 << 10
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ended := make(chan error, files)
	for i := range files {
		tg := fx.target(fx.album.AddFile(enteapitest.FileSpec{Title: "p.jpg", Size: 10 << 10, Seed: byte(i)}))
		go func() {
			p, err := fe.Fetch(ctx, tg, fx.dir)
			if err == nil {
				p.Discard()
			}
			ended <- err
		}()
	}
	for range download.MinDownloads {
		wait(t, entered, "a body read")
	}
	wait(t, waited, "a download waiting for memory")
	cancel()
	// The four being read wait for open: the first to end is the one
	// that waited for memory.
	assert.ErrorIs(t, wait(t, ended, "the waiting download's end"), context.Canceled)
	close(open)
	for range files - 1 {
		wait(t, ended, "a download's end")
	}
	fx.noTemps()
}
