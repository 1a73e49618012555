package download

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/errs"
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

// segmented reads an object's ciphertext from `from` (a chunk's edge) to
// its end, fetched a chunk at a time by several workers at once and handed
// out in order. The workers write what they fetch to the download's ring
// on disk (see ahead.go), never to memory: a file in flight costs one copy
// buffer a worker, however many chunks are ahead of the reader.
type segmented struct {
	ctx    context.Context
	cancel context.CancelFunc
	f      *Fetcher
	id     int64
	url    string // the store's address, or "" to go through museum
	etag   string
	total  int64
	from   int64
	count  int // chunks in all

	ring   *os.File
	slots  int
	places chan struct{} // a chunk's slot in the ring, held from its fetch to its last byte read

	wg      sync.WaitGroup
	mu      sync.Mutex
	next    int           // the next chunk a worker takes
	ready   map[int]bool  // chunks in the ring, not yet read
	kept    map[int]kept  // chunks an earlier attempt or run left in the ring
	failed  map[int]error // chunks that could not be had
	stopped bool          // a chunk failed: take no further one
	wake    chan struct{}

	cur  int   // the chunk being read
	pos  int64 // its bytes read
	have bool  // it is in the ring
	done func()
}

// newSegmented starts workers on the object after its first chunk's
// answer obj (206, checked), which worker 0 reads: the chunk from its byte
// first.got on, the ring holding the bytes before (with their CRC-32C).
func (f *Fetcher) newSegmented(ctx context.Context, id int64, obj *apiclient.Object, from, total int64, ring *os.File, first kept) *segmented {
	ctx, cancel := context.WithCancel(ctx)
	s := &segmented{ctx: ctx, cancel: cancel, f: f, id: id, url: obj.URL, etag: obj.ETag, total: total, from: from,
		count: int((total - from + WireChunk - 1) / WireChunk), ring: ring, slots: f.ringSlots(),
		ready: map[int]bool{}, failed: map[int]error{}, wake: make(chan struct{}), next: 1}
	s.kept = s.keptChunks()
	if first.n > 0 {
		s.kept[0] = first // read in part from the ring: see fromRing
	}
	s.places = make(chan struct{}, s.slots)
	for range s.slots - 1 {
		s.places <- struct{}{} // the first chunk holds the last one
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.deliver(0, s.fill(obj, first))
		s.work()
	}()
	for range s.slots - 2 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.work()
		}()
	}
	return s
}

// bounds is chunk k's first and last byte.
func (s *segmented) bounds(k int) (int64, int64) {
	start := s.from + int64(k)*WireChunk
	return start, min(start+WireChunk, s.total) - 1
}

// slot is where chunk k lies in the ring.
func (s *segmented) slot(k int) int64 { return slotAt(s.abs(k), s.slots) }

// abs is chunk k's index in the object.
func (s *segmented) abs(k int) int64 { return s.from/WireChunk + int64(k) }

// keptFirst is how much of the chunk at from, n bytes, the ring holds in
// part: taken up from there. One it holds whole was not taken up by the
// roll forward, so it does not authenticate: fetched again whole.
func keptFirst(ring *os.File, from, n int64, slots int) kept {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	got, sum := held(ring, from/WireChunk, slots, n, *bp)
	if got == n {
		return kept{}
	}
	return kept{got, sum}
}

// kept is how much of a chunk the ring holds, and its CRC-32C.
type kept struct {
	n   int64
	sum uint32
}

// keptChunks are the chunks after the first that the ring already holds,
// whole or in part (a kill or a failed attempt left them): what it holds
// is not fetched again.
func (s *segmented) keptChunks() map[int]kept {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	out := map[int]kept{}
	for k := 1; k < min(s.count, s.slots); k++ {
		start, end := s.bounds(k)
		if n, sum := held(s.ring, s.abs(k), s.slots, end+1-start, *bp); n > 0 {
			out[k] = kept{n, sum}
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
			_ = forgetSlot(s.ring, s.abs(k), s.slots)
		}
	}
}

// work fetches chunks in order until none is left or the reader stops.
func (s *segmented) work() {
	for {
		select {
		case <-s.places:
		case <-s.ctx.Done():
			return
		}
		s.mu.Lock()
		k, stopped := s.next, s.stopped
		s.next++
		s.mu.Unlock()
		if k >= s.count || stopped {
			s.places <- struct{}{}
			return
		}
		start, end := s.bounds(k)
		if kp := s.kept[k]; kp.n == end+1-start {
			s.deliver(k, nil)
			continue
		}
		err := s.rest(k, s.kept[k].n, s.kept[k].sum)
		s.deliver(k, err)
		if err != nil {
			return
		}
	}
}

// fill writes the first chunk from its answer, which the caller checked:
// from byte first.n of the chunk on, after the bytes the ring held.
func (s *segmented) fill(obj *apiclient.Object, first kept) error {
	if first.n == 0 {
		if err := clearSlot(s.ring, s.abs(0), s.slots); err != nil {
			obj.Body.Close()
			return err
		}
	}
	start, end := s.bounds(0)
	sum := first.sum
	n, err := s.copyIn(obj.Body, 0, first.n, end+1-start-first.n, &sum)
	obj.Body.Close()
	if err != nil {
		return s.rest(0, first.n+n, sum)
	}
	return nil
}

// copyIn writes want bytes of body to chunk k's slot from byte got of the
// chunk on, through a buffer of its own, adding them to the chunk's
// CRC-32C sum and recording after each write how far the slot goes, and
// returns how many it wrote.
func (s *segmented) copyIn(body io.Reader, k int, got, want int64, sum *uint32) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf, off, n := *bp, s.slot(k)+got, int64(0)
	for n < want {
		m, err := io.ReadFull(body, buf[:min(int64(len(buf)), want-n)])
		if m > 0 {
			if _, werr := s.ring.WriteAt(buf[:m], off+n); werr != nil {
				return n, werr
			}
			*sum = crc32.Update(*sum, castagnoli, buf[:m])
			n += int64(m)
			if werr := markSlot(s.ring, s.abs(k), s.slots, got+n, *sum); werr != nil {
				return n, werr
			}
			if n == want && wholeInRing != nil {
				start, end := s.bounds(k)
				if got+n == end+1-start {
					wholeInRing(s.abs(k))
				}
			}
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// copyBufs are the workers' buffers between a body and the ring.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// rest fetches bytes got.. of chunk k into its slot, retried; a cut answer
// is followed by a request for the bytes still missing only. sum is the
// CRC-32C of the bytes before got.
func (s *segmented) rest(k int, got int64, sum uint32) error {
	start, end := s.bounds(k)
	if got == 0 {
		if err := clearSlot(s.ring, s.abs(k), s.slots); err != nil {
			return err
		}
	}
	err := retry.Do(s.ctx, s.f.Policy, func(ctx context.Context) error {
		if s.f.noRange.Load() {
			return errWhole // another range found the store ignores Range
		}
		obj, err := s.open(ctx, start+got, end)
		if err != nil {
			return err
		}
		defer obj.Body.Close()
		if obj.Status == 200 {
			s.f.noRange.Store(true)
			return errWhole
		}
		if !s.continues(obj, start+got, end) {
			return errRange
		}
		n, err := s.copyIn(obj.Body, k, got, end+1-start-got, &sum)
		got += n
		return err
	})
	if errors.Is(err, errWhole) {
		return errRange // this attempt ends; the next asks for the whole object
	}
	return err
}

// errWhole stops a range's retries at once: the store answered a range
// with the whole object, so no range of this run can succeed.
var errWhole = errors.New("the object store answers ranges with the whole object")

// open asks for bytes from through to of the object: of the store
// directly when its address is known, else through museum.
func (s *segmented) open(ctx context.Context, from, to int64) (*apiclient.Object, error) {
	s.mu.Lock()
	url := s.url
	s.mu.Unlock()
	if url != "" {
		obj, err := s.f.limited(ctx)(s.f.Client.DownloadObjectRange(ctx, url, from, to))
		var ae *errs.ApiError
		if !errors.As(err, &ae) || (ae.Status != 401 && ae.Status != 403) {
			return obj, err
		}
		s.mu.Lock()
		s.url = "" // the presigned address expired: ask museum again
		s.mu.Unlock()
	}
	return s.f.limited(ctx)(s.f.Client.DownloadFileRange(ctx, s.id, from, to))
}

// limited passes an answer's body through the run's bandwidth limit.
func (f *Fetcher) limited(ctx context.Context) func(*apiclient.Object, error) (*apiclient.Object, error) {
	return func(obj *apiclient.Object, err error) (*apiclient.Object, error) {
		if err == nil && f.Rate != nil {
			obj.Body = f.Rate.Reader(ctx, obj.Body)
		}
		return obj, err
	}
}

// continues reports whether obj is exactly bytes from..to of the object
// the first answer came from.
func (s *segmented) continues(obj *apiclient.Object, from, to int64) bool {
	return rangeIs(obj, from, to, s.total) && (s.etag == "" || obj.ETag == s.etag)
}

// rangeIs reports a 206 answer of exactly bytes from..to of total.
func rangeIs(obj *apiclient.Object, from, to, total int64) bool {
	if obj.Status != 206 {
		return false
	}
	var a, b, t int64
	if _, err := fmt.Sscanf(obj.ContentRange, "bytes %d-%d/%d", &a, &b, &t); err != nil {
		return false
	}
	return a == from && b == to && t == total
}

// deliver tells the reader chunk k is in the ring, or why it is not.
// After an error no worker takes a further chunk; those under way finish,
// so the reader gets every chunk before the failed one.
func (s *segmented) deliver(k int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed[k] = fmt.Errorf("bytes %d on: %w", s.from+int64(k)*WireChunk, err)
		s.stopped = true
	} else {
		s.ready[k] = true
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

// Read hands out the object's bytes in order, from the ring.
func (s *segmented) Read(p []byte) (int, error) {
	for !s.have {
		if s.cur >= s.count {
			return 0, io.EOF
		}
		s.mu.Lock()
		ok := s.ready[s.cur]
		err, wake := s.failed[s.cur], s.wake
		delete(s.ready, s.cur)
		s.mu.Unlock()
		switch {
		case ok:
			s.have, s.pos = true, 0
		case err != nil:
			return 0, err
		default:
			select {
			case <-wake:
			case <-s.ctx.Done():
				return 0, s.ctx.Err()
			}
		}
	}
	start, end := s.bounds(s.cur)
	left := end + 1 - start - s.pos
	n, err := s.ring.ReadAt(p[:min(int64(len(p)), left)], s.slot(s.cur)+s.pos)
	s.pos += int64(n)
	if err != nil && (!errors.Is(err, io.EOF) || int64(n) != left) {
		return n, fmt.Errorf("reading back chunk %d fetched ahead: %w", s.cur, err)
	}
	if s.pos == end+1-start {
		s.have = false
		s.cur++
		s.places <- struct{}{} // its slot is free for a chunk further on
	}
	return n, nil
}

// Close stops the workers, waits for them and gives back the file's
// multi-stream ticket.
func (s *segmented) Close() error {
	s.cancel()
	s.wg.Wait()
	if s.done != nil {
		s.done()
		s.done = nil
	}
	return nil
}

// open asks for t's ciphertext from byte from on: as several ranges at
// once, into rs's ring, when the file is large enough, the store honours
// Range and a place is free (one of MultiStreamFiles, or for a download
// whose ring was left over one as many again); else as one answer. A
// store that ignores Range is remembered, and asked for whole objects
// from then on.
func (f *Fetcher) open(ctx context.Context, t Target, from int64, rs *resume) (*apiclient.Object, error) {
	if f.Streams < 2 || t.Size < 0 || t.Size-from <= f.streamAbove() || f.noRange.Load() {
		return f.single(ctx, t, from)
	}
	file, release := f.place(rs)
	if file == nil {
		// Every multi-stream place is taken: one stream for now, taken over
		// by several ranges from a chunk's edge once a place frees up, so a
		// large file started late is not the run's long pole.
		obj, err := f.single(ctx, t, from)
		if err == nil && (from == 0 && obj.Status == 200 && obj.Length == t.Size ||
			from > 0 && rangeIs(obj, from, t.Size-1, t.Size)) {
			obj.Body = &upgrading{f: f, ctx: ctx, id: t.FileID, body: obj.Body, url: obj.URL, etag: obj.ETag,
				pos: from, next: from, total: t.Size, ring: rs.aheadFile}
		}
		return obj, err
	}
	return f.ranges(ctx, t, from, file, release)
}

// single asks for t's ciphertext from byte from on as one answer.
func (f *Fetcher) single(ctx context.Context, t Target, from int64) (*apiclient.Object, error) {
	if from > 0 {
		return f.limited(ctx)(f.Client.DownloadFileFrom(ctx, t.FileID, from))
	}
	return f.limited(ctx)(f.Client.DownloadFile(ctx, t.FileID))
}

// place takes a multi-stream place and the ring for a download, and
// returns the ring and how to give the place back; nil when no place is
// free or the ring cannot be had. A download whose ring an earlier
// attempt or run left may take one of as many places again beside them
// when every place is taken: what the ring holds is read only by ranges,
// and would be fetched again by one stream.
func (f *Fetcher) place(rs *resume) (*os.File, func()) {
	release, ticketed := f.unticket, f.ticket()
	if !ticketed && rs.ahead != nil {
		release, ticketed = f.unextra, f.extra()
	}
	if !ticketed {
		return nil, nil
	}
	file, err := rs.aheadFile()
	if err != nil {
		release()
		return nil, nil
	}
	return file, release
}

// ranges asks for t's ciphertext from byte from on as several ranges into
// the ring file, holding a place it gives back through untick when the
// download ends or does not go on as ranges.
func (f *Fetcher) ranges(ctx context.Context, t Target, from int64, file *os.File, untick func()) (*apiclient.Object, error) {
	end := min(from+WireChunk, t.Size) - 1
	first := keptFirst(file, from, end+1-from, f.ringSlots())
	obj, err := f.limited(ctx)(f.Client.DownloadFileRange(ctx, t.FileID, from+first.n, end))
	if ae := (*errs.ApiError)(nil); first.n > 0 && errors.As(err, &ae) && ae.Status == 416 {
		first = kept{} // the rest of the chunk refused: the whole chunk, then
		obj, err = f.limited(ctx)(f.Client.DownloadFileRange(ctx, t.FileID, from, end))
	}
	switch {
	case err != nil:
		untick()
		return nil, err
	case obj.Status == 200:
		untick()
		f.noRange.Store(true)
		return obj, nil // the whole object: the caller takes it from byte 0
	case !rangeIs(obj, from+first.n, end, t.Size):
		untick()
		if from > 0 && first.n == 0 {
			return obj, nil // the caller sees it does not continue, and starts over
		}
		if from > 0 {
			obj.Body.Close()
			return f.limited(ctx)(f.Client.DownloadFileFrom(ctx, t.FileID, from)) // the caller checks it
		}
		// Not the object announced (another size, say): one answer, whose
		// checks name what is wrong.
		obj.Body.Close()
		return f.single(ctx, t, from)
	}
	sg := f.newSegmented(ctx, t.FileID, obj, from, t.Size, file, first)
	sg.done = untick
	return &apiclient.Object{Body: sg, Length: t.Size - from, Status: 206, ETag: obj.ETag,
		ContentRange: fmt.Sprintf("bytes %d-%d/%d", from, t.Size-1, t.Size)}, nil
}
