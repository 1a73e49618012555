package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/retry"
)

// WireChunk is one encrypted chunk on the wire: 4 MiB of plaintext and
// its 17 bytes of tag and MAC. Ranges are cut on these edges.
const WireChunk = secretstream.ChunkSize + secretstream.Overhead

// Multi-stream defaults: a file of more than DefaultStreamAbove ciphertext
// bytes is fetched as DefaultStreams ranges in flight, a chunk each,
// through at most MultiStreamFiles such files at once.
const (
	DefaultStreams     = 8
	DefaultStreamAbove = 32 << 20
	MultiStreamFiles   = 2
)

// errRange marks a ranged answer that does not continue the object: the
// attempt ends as a cut one would, and the next one checks the object
// again (and starts over from byte 0 if it changed).
var errRange = fmt.Errorf("a ranged answer does not continue the object: %w", io.ErrUnexpectedEOF)

// errWhole stops a range's retries at once: the store answered a range
// with the whole object, so no range of this run can succeed.
var errWhole = errors.New("the object store answers ranges with the whole object")

// segmented reads an object's ciphertext from `from` (a chunk's edge) to
// its end, fetched a chunk at a time by several workers at once and handed
// out in order. The workers write what they fetch to the download's ring
// on disk, never to memory: a file in flight costs one copy buffer a
// worker, however many chunks are ahead of the reader. How many workers
// fetch at once follows the run's number of ranges (see pace.Ranges), as
// the reader measures the rate they bring.
type segmented struct {
	ctx    context.Context
	cancel context.CancelFunc
	obj    *object
	from   int64 // the first chunk's first byte
	count  int   // chunks in all
	ring   *ring
	kept   map[int]kept // chunks an earlier attempt or run left in the ring
	board  board
	read   reading
	window *pace.Window
	wg     sync.WaitGroup
	done   func()
}

// reading is where the reader is: the chunk it reads, its bytes read, and
// whether it is in the ring; and the chunk from which it reads one stream,
// tail, instead (count: none).
type reading struct {
	k    int
	pos  int64
	have bool
	one  int
	tail io.ReadCloser
}

// newSegmented starts n workers on the object o after its first chunk's
// answer first (206, checked), which worker 0 reads: the chunk from its
// byte got.n on, the ring r holding the bytes before (with their CRC-32C).
func newSegmented(ctx context.Context, o *object, first *apiclient.Object, from int64, r *ring, got kept, n int) *segmented {
	ctx, cancel := context.WithCancel(ctx)
	s := &segmented{ctx: ctx, cancel: cancel, obj: o, from: from, ring: r,
		count: int((o.total - from + WireChunk - 1) / WireChunk), board: newBoard(1), window: o.src.ranges.Window(n)}
	s.read.one = s.count
	s.kept = s.keptChunks()
	if got.n > 0 {
		s.kept[0] = got // read in part from the ring: see fromRing
	}
	r.open()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deliver(0, s.fill(first, got))
		s.work()
	}()
	s.resize(n)
	return s
}

// resize has n workers fetch at once, the ring holding n chunks ahead of
// the one being read. Workers beyond n stop before their next chunk.
func (s *segmented) resize(n int) {
	start, moved := s.board.want(n)
	s.ring.resize(moved)
	for range start {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.work()
		}()
	}
}

// bounds is chunk k's first and last byte.
func (s *segmented) bounds(k int) (int64, int64) {
	start := s.from + int64(k)*WireChunk
	return start, min(start+WireChunk, s.obj.total) - 1
}

// size is chunk k's length.
func (s *segmented) size(k int) int64 {
	start, end := s.bounds(k)
	return end + 1 - start
}

// abs is chunk k's index in the object.
func (s *segmented) abs(k int) int64 { return s.from/WireChunk + int64(k) }

// keptChunks are the chunks after the first that the ring already holds,
// whole or in part (a kill or a failed attempt left them): what it holds
// is not fetched again.
func (s *segmented) keptChunks() map[int]kept {
	out := map[int]kept{}
	for k := 1; k < min(s.count, s.ring.slots); k++ {
		if kp := s.ring.held(s.abs(k), s.size(k)); kp.n > 0 {
			out[k] = kp
		}
	}
	return out
}

// fromRing reports whether the object's chunk j was read, whole or in
// part, from what the ring held before this attempt.
func (s *segmented) fromRing(j int64) bool { return s.kept[int(j-s.from/WireChunk)].n > 0 }

// forgetKept clears the records of the chunks from the object's chunk j
// on that the ring held before this attempt. Call it once s is closed.
func (s *segmented) forgetKept(j int64) {
	for k := range s.kept {
		if s.abs(k) >= j {
			_ = s.ring.forget(s.abs(k))
		}
	}
}

// work fetches chunks in order until none is left, the reader stops, or
// fewer workers are wanted.
func (s *segmented) work() {
	for s.board.stays() {
		if !s.fetchNext() {
			s.board.left()
			return
		}
	}
}

// fetchNext fetches the next chunk into the ring, and reports whether the
// worker goes on.
func (s *segmented) fetchNext() bool {
	if !s.ring.take(s.ctx) {
		return false
	}
	k, ok := s.board.take(s.count)
	if !ok {
		s.ring.give()
		return false
	}
	if kp := s.kept[k]; kp.n == s.size(k) {
		s.deliver(k, nil)
		return true
	}
	err := s.rest(k, s.kept[k].n, s.kept[k].sum)
	s.deliver(k, err)
	return err == nil
}

// fill writes the first chunk from its answer, which the caller checked:
// from byte got.n of the chunk on, after the bytes the ring held.
func (s *segmented) fill(obj *apiclient.Object, got kept) error {
	if got.n == 0 {
		if err := s.ring.clear(s.abs(0)); err != nil {
			obj.Body.Close()
			return err
		}
	}
	sum := got.sum
	n, err := s.ring.fill(obj.Body, s.abs(0), got.n, s.size(0)-got.n, s.size(0), &sum)
	obj.Body.Close()
	if err != nil {
		return s.rest(0, got.n+n, sum)
	}
	return nil
}

// rest fetches bytes got.. of chunk k into its slot, retried; a cut answer
// is followed by a request for the bytes still missing only. sum is the
// CRC-32C of the bytes before got.
func (s *segmented) rest(k int, got int64, sum uint32) error {
	start, end := s.bounds(k)
	if got == 0 {
		if err := s.ring.clear(s.abs(k)); err != nil {
			return err
		}
	}
	src := s.obj.src
	err := retry.Do(s.ctx, src.policy, func(ctx context.Context) error {
		if src.noRange.Load() {
			return errWhole // another range found the store ignores Range
		}
		obj, err := s.obj.open(ctx, start+got, end)
		if err != nil {
			return err
		}
		defer obj.Body.Close()
		if obj.Status == 200 {
			src.noRange.Store(true)
			return errWhole
		}
		if !s.obj.continues(obj, start+got, end) {
			return errRange
		}
		n, err := s.ring.fill(obj.Body, s.abs(k), got, end+1-start-got, s.size(k), &sum)
		got += n
		return err
	})
	if errors.Is(err, errWhole) {
		return errRange // this attempt ends; the next asks for the whole object
	}
	return err
}

// deliver tells the reader chunk k is in the ring, or why it is not.
// After an error no worker takes a further chunk; those under way finish,
// so the reader gets every chunk before the failed one.
func (s *segmented) deliver(k int, err error) {
	if err != nil {
		err = fmt.Errorf("bytes %d on: %w", s.from+int64(k)*WireChunk, err)
	}
	s.board.deliver(k, err)
}

// Read hands out the object's bytes in order, from the ring, and from the
// chunk the ranges stopped at on (see toOne), from one stream.
func (s *segmented) Read(p []byte) (int, error) {
	r := &s.read
	for !r.have {
		switch {
		case r.k >= s.count:
			return 0, io.EOF
		case r.k == r.one:
			return s.readOne(p)
		}
		if err := s.board.await(s.ctx, r.k); err != nil {
			return 0, err
		}
		r.have, r.pos = true, 0
	}
	left := s.size(r.k) - r.pos
	n, err := s.ring.readAt(p[:min(int64(len(p)), left)], s.abs(r.k), r.pos)
	r.pos += int64(n)
	if err != nil && (!errors.Is(err, io.EOF) || int64(n) != left) {
		return n, fmt.Errorf("reading back chunk %d fetched ahead: %w", r.k, err)
	}
	if size := s.size(r.k); r.pos == size {
		r.have = false
		r.k++
		s.ring.give() // its slot is free for a chunk further on
		s.follow(s.window.Chunk(size))
	}
	return n, nil
}

// follow goes on with n ranges at once; from more to one, as one stream.
func (s *segmented) follow(n int) {
	switch {
	case s.read.one < s.count: // one stream already
	case n == 1 && s.board.wanting() > 1:
		s.toOne()
	default:
		s.resize(n)
	}
}

// toOne has the workers take no further chunk: once the reader is past
// those they took, the rest of the object comes as one stream, which costs
// neither a request nor a trip through the ring a chunk.
func (s *segmented) toOne() {
	s.read.one = s.board.cut()
}

// readOne reads the rest of the object from one stream, opened at first.
func (s *segmented) readOne(p []byte) (int, error) {
	r := &s.read
	if r.tail == nil {
		start, _ := s.bounds(r.k)
		obj, err := s.obj.open(s.ctx, start, s.obj.total-1)
		if err != nil {
			return 0, fmt.Errorf("bytes %d on: %w", start, err)
		}
		if !s.obj.continues(obj, start, s.obj.total-1) {
			obj.Body.Close()
			if obj.Status == 200 {
				s.obj.src.noRange.Store(true)
			}
			return 0, fmt.Errorf("bytes %d on: %w", start, errRange)
		}
		r.tail = obj.Body
	}
	return r.tail.Read(p)
}

// Close stops the workers, waits for them, closes the one stream if there
// is one, and gives back the file's multi-stream ticket.
func (s *segmented) Close() error {
	s.cancel()
	s.wg.Wait()
	if s.read.tail != nil {
		s.read.tail.Close()
		s.read.tail = nil
	}
	if s.done != nil {
		s.done()
		s.done = nil
	}
	return nil
}

// board is where a download's workers hand its chunks over to its reader:
// which chunk a worker takes next, the chunks in the ring and not yet
// read, and those that could not be had; and how many workers fetch.
type board struct {
	mu      sync.Mutex
	next    int
	ready   map[int]bool
	failed  map[int]error
	stopped bool // a chunk failed: take no further one
	wake    chan struct{}
	wanted  int // workers that fetch at once
	running int // workers under way
	end     int // no chunk from it on is taken (0: none such)
}

// newBoard is a board whose workers take chunk next first, with one worker
// under way.
func newBoard(next int) board {
	return board{next: next, ready: map[int]bool{}, failed: map[int]error{}, wake: make(chan struct{}), running: 1}
}

// want has n workers fetch at once, and returns how many to start and by
// how many the number moved. Workers that ended with the chunks are not
// started again.
func (b *board) want(n int) (start, moved int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	moved = n - b.wanted
	if moved > 0 {
		start = max(n-b.running, 0)
	}
	b.wanted, b.running = n, b.running+start
	return start, moved
}

// stays reports whether a worker takes another chunk: not when more run
// than are wanted, and the worker that leaves is counted out.
func (b *board) stays() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.running > b.wanted {
		b.running--
		return false
	}
	return true
}

// left counts out a worker that ends for another cause.
func (b *board) left() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running--
}

// take is the chunk a worker fetches next, and false when there is none
// of count chunks left, a chunk failed, or the workers were cut off.
func (b *board) take(count int) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.next
	b.next++
	return k, k < count && !b.stopped && (b.end == 0 || k < b.end)
}

// cut has the workers take no further chunk, and returns the first they
// do not take.
func (b *board) cut() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.end == 0 {
		b.end = b.next
	}
	return b.end
}

// wanting is how many workers are wanted.
func (b *board) wanting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.wanted
}

// deliver records chunk k in the ring, or err for it, and wakes the
// reader.
func (b *board) deliver(k int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		b.failed[k] = err
		b.stopped = true
	} else {
		b.ready[k] = true
	}
	close(b.wake)
	b.wake = make(chan struct{})
}

// await waits until chunk k is in the ring, and returns why it never will
// be (its error, or ctx's).
func (b *board) await(ctx context.Context, k int) error {
	for {
		b.mu.Lock()
		ok, err, wake := b.ready[k], b.failed[k], b.wake
		delete(b.ready, k)
		b.mu.Unlock()
		switch {
		case ok:
			return nil
		case err != nil:
			return err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ringBody is an answer read, in part, from the ring.
type ringBody interface {
	io.Closer
	fromRing(j int64) bool
	forgetKept(from int64)
}
