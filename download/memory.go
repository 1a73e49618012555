package download

import (
	"context"

	"github.com/quak-photos/quak/apiclient/secretstream"
	"golang.org/x/sync/semaphore"
)

// DefaultMemory is how many bytes of chunk buffers the downloads in flight
// hold together at most. A download reads each encrypted chunk whole into
// its buffer before it can authenticate it, so every body under way holds
// up to a chunk (a 1 MiB photo: 1.06 MiB), and up to 32 were read at once.
// Against museum, 200 × 1 MiB took the same time with this cap (five such
// bodies at once) on loopback, on one 100 Mbit/s link at 40 ms and at
// 20 MB/s a connection, at 27.5–29.8 MiB peak RSS instead of 39–53
// (docs/performance.md). Requests still go out as the number of downloads
// allows; only reading their bodies waits.
const DefaultMemory = 6 << 20

// MinDownloads is how many bodies can always be read at once, however
// large their chunks: a download weighs at most its memory cap's share.
const MinDownloads = 4

// memory caps the chunk buffers of the downloads in flight.
type memory struct {
	sem   *semaphore.Weighted
	share int64 // the most one download weighs
}

func newMemory(limit int64) *memory {
	return &memory{sem: semaphore.NewWeighted(limit), share: max(limit/MinDownloads, 1)}
}

// memoryWait, if set, hears of each download that waits for memory (tests).
var memoryWait func()

// take waits until a body of size ciphertext bytes (-1: not known) can be
// read, and returns what gives its memory back.
func (m *memory) take(ctx context.Context, size int64) (release func(), err error) {
	w := min(bufferSize(size), m.share)
	if !m.sem.TryAcquire(w) {
		if memoryWait != nil {
			memoryWait()
		}
		if err := m.sem.Acquire(ctx, w); err != nil {
			return nil, err
		}
	}
	return func() { m.sem.Release(w) }, nil
}

// bufferSize is the chunk buffer a stream of size ciphertext bytes reads
// into: all of it, up to one whole chunk.
func bufferSize(size int64) int64 {
	whole := int64(secretstream.ChunkSize + secretstream.Overhead)
	if size < 0 || size > whole {
		return whole
	}
	return size
}
