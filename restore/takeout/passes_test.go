package takeout

import (
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	tt "github.com/quak-photos/quak/restore/takeout/takeouttest"
)

// counted counts the bytes read from each part's files, by the path
// opened.
type counted struct {
	mu    sync.Mutex
	bytes map[string]*atomic.Int64
}

func (c *counted) open(name string) (partFile, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.bytes == nil {
		c.bytes = map[string]*atomic.Int64{}
	}
	n := c.bytes[name]
	if n == nil {
		n = &atomic.Int64{}
		c.bytes[name] = n
	}
	return &countingFile{File: f, n: n}, nil
}

func (c *counted) read(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n := c.bytes[name]; n != nil {
		return n.Load()
	}
	return 0
}

type countingFile struct {
	*os.File
	n *atomic.Int64
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.n.Add(int64(n))
	return n, err
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

// passTakeout has photos large enough that a second read of any would
// show: a video streamed (over the tests' 1.33 MiB), photos read into
// memory, and a video in two folders.
func passTakeout() []tfile {
	return append(bigTakeout(bigSize), f(gp+"Photos from 2021/VID_0001.mp4", movie(time.Unix(t2021, 0), bigSize, false, 9)),
		f(gp+"Photos from 2021/VID_0001.mp4.json", photoJSON("VID_0001.mp4", t2021, nil)),
		f(gp+"Photos from 2022/big.jpg", append(jpeg(30), tt.Noise(1<<20, 30)...)),
		f(gp+"Photos from 2022/big.jpg.json", photoJSON("big.jpg", t2022, nil)))
}

// Reading a zip costs one pass over its bytes (its directory, each JSON,
// each photo once, even one in two folders); a tgz two (one to list and
// hash, one to upload); a second run reads a zip's directory and JSON and
// a tgz once.
func TestImportReadsAZipOnceAndATgzTwice(t *testing.T) {
	for _, kind := range []string{"zip", "tgz"} {
		t.Run(kind, func(t *testing.T) {
			a := newAccount(t)
			paths := writeParts(t, t.TempDir(), [][]tfile{passTakeout()}, kind)
			fi, err := os.Stat(paths[0])
			assert.NoError(t, err)
			size := fi.Size()
			c := &counted{}
			sum, err := a.importWith(paths, Options{open: c.open}, a.options())
			assert.NoError(t, err)
			assert.Equal(t, 3, sum.Uploaded)
			passes := float64(c.read(paths[0])) / float64(size)
			if kind == "zip" {
				assert.LessOrEqual(t, c.read(paths[0]), size+64<<10, "one pass over the zip (%.3f)", passes)
			} else {
				assert.LessOrEqual(t, c.read(paths[0]), 2*size, "two passes over the tgz (%.3f)", passes)
				assert.Greater(t, c.read(paths[0]), size, "the second pass uploads")
			}

			c2 := &counted{}
			_, err = a.importWith(paths, Options{open: c2.open}, a.options())
			assert.NoError(t, err)
			if kind == "zip" {
				assert.Less(t, c2.read(paths[0]), int64(1<<20), "a second run reads no photo")
			} else {
				assert.LessOrEqual(t, c2.read(paths[0]), size, "a second run: the listing pass only")
			}
		})
	}
}
