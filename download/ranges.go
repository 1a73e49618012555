package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// WireChunk is one encrypted chunk on the wire: 4 MiB of plaintext and
// its 17 bytes of tag and MAC. Ranges are cut on these edges.
const WireChunk = secretstream.ChunkSize + secretstream.Overhead

// Multi-stream defaults: a file of more than DefaultStreamAbove ciphertext
// bytes is fetched as DefaultStreams ranges in flight, SegmentChunks
// chunks each, through at most MultiStreamFiles such files at once.
const (
	DefaultStreams     = 8
	DefaultStreamAbove = 32 << 20
	SegmentChunks      = 1
	MultiStreamFiles   = 2
)

// errRange marks a ranged answer that does not continue the object: the
// attempt ends as a cut one would, and the next one checks the object
// again (and starts over from byte 0 if it changed).
var errRange = fmt.Errorf("a ranged answer does not continue the object: %w", io.ErrUnexpectedEOF)

// segmented reads an object's ciphertext from `from` to its end, fetched
// as segments of seg bytes by several workers at once and handed out in
// order. It holds at most bufs segments in memory.
type segmented struct {
	ctx    context.Context
	cancel context.CancelFunc
	f      *Fetcher
	id     int64
	url    string // the store's address, or "" to go through museum
	etag   string
	total  int64
	from   int64
	seg    int64
	count  int // segments in all

	free    chan []byte
	wg      sync.WaitGroup
	mu      sync.Mutex
	next    int            // the next segment a worker takes
	ready   map[int][]byte // fetched segments not yet read
	failed  map[int]error  // segments that could not be had
	stopped bool           // a segment failed: take no further one
	wake    chan struct{}

	cur  int    // the segment being read
	buf  []byte // what is left of it
	held []byte // its buffer, to give back
	done func()
}

// newSegmented starts workers on the object after its first segment's
// answer obj (206, checked), which worker 0 reads.
func (f *Fetcher) newSegmented(ctx context.Context, id int64, obj *apiclient.Object, from, total, seg int64, streams int) *segmented {
	ctx, cancel := context.WithCancel(ctx)
	s := &segmented{ctx: ctx, cancel: cancel, f: f, id: id, url: obj.URL, etag: obj.ETag, total: total, from: from, seg: seg,
		count: int((total - from + seg - 1) / seg), ready: map[int][]byte{}, failed: map[int]error{}, wake: make(chan struct{}), next: 1}
	s.free = make(chan []byte, streams+1)
	for range streams + 1 {
		s.free <- f.takeBuffer() // nil: allocated on first use
	}
	buf := <-s.free
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		b, err := s.fill(buf, 0, obj)
		s.deliver(0, b, err)
		s.work()
	}()
	for range streams - 1 {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.work()
		}()
	}
	return s
}

// bounds is segment k's first and last byte.
func (s *segmented) bounds(k int) (int64, int64) {
	start := s.from + int64(k)*s.seg
	return start, min(start+s.seg, s.total) - 1
}

// work fetches segments in order until none is left or the reader stops.
func (s *segmented) work() {
	for {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-s.ctx.Done():
			return
		}
		s.mu.Lock()
		k, stopped := s.next, s.stopped
		s.next++
		s.mu.Unlock()
		if k >= s.count || stopped {
			s.free <- buf
			return
		}
		b, err := s.fetch(buf, k)
		s.deliver(k, b, err)
		if err != nil {
			return
		}
	}
}

// fetch gets segment k into buf with its own retries.
func (s *segmented) fetch(buf []byte, k int) ([]byte, error) {
	start, end := s.bounds(k)
	buf = grow(buf, end+1-start)
	return buf, s.rest(buf, start, end, 0)
}

// fill reads the first segment from its answer, which the caller checked.
func (s *segmented) fill(buf []byte, k int, obj *apiclient.Object) ([]byte, error) {
	start, end := s.bounds(k)
	buf = grow(buf, end+1-start)
	n, err := io.ReadFull(obj.Body, buf)
	obj.Body.Close()
	if err == nil {
		return buf, nil
	}
	return buf, s.rest(buf, start, end, int64(n))
}

// rest fetches bytes start+got..end into buf[got:], retried; a cut answer
// is followed by a request for the bytes still missing only.
func (s *segmented) rest(buf []byte, start, end, got int64) error {
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
		n, err := io.ReadFull(obj.Body, buf[got:])
		got += int64(n)
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

// grow returns buf at length n, allocating a new one only when buf is
// too small.
func grow(buf []byte, n int64) []byte {
	if int64(cap(buf)) < n {
		segmentAllocs.Add(1)
		return make([]byte, n)
	}
	return buf[:n]
}

// segmentAllocs counts the segment buffers ever allocated: files after the
// first reuse the first one's.
var segmentAllocs atomic.Int64

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

// deliver hands segment k, or its error, to the reader. After an error
// no worker takes a further segment; those under way finish, so the
// reader gets every segment before the failed one.
func (s *segmented) deliver(k int, b []byte, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.failed[k] = fmt.Errorf("bytes %d on: %w", s.from+int64(k)*s.seg, err)
		s.stopped = true
	} else {
		s.ready[k] = b
	}
	close(s.wake)
	s.wake = make(chan struct{})
}

// Read hands out the object's bytes in order.
func (s *segmented) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.held != nil {
			s.free <- s.held[:0]
			s.held = nil
			s.cur++
		}
		if s.cur >= s.count {
			return 0, io.EOF
		}
		s.mu.Lock()
		b, ok := s.ready[s.cur]
		err, wake := s.failed[s.cur], s.wake
		delete(s.ready, s.cur)
		s.mu.Unlock()
		switch {
		case ok:
			s.buf, s.held = b, b
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
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// Close stops the workers, waits for them and gives back the file's
// multi-stream ticket.
func (s *segmented) Close() error {
	s.cancel()
	s.wg.Wait()
	s.mu.Lock()
	for k, b := range s.ready {
		s.f.giveBuffer(b)
		delete(s.ready, k)
	}
	s.mu.Unlock()
	if s.held != nil {
		s.f.giveBuffer(s.held)
		s.held, s.buf = nil, nil
	}
	for len(s.free) > 0 {
		s.f.giveBuffer(<-s.free)
	}
	if s.done != nil {
		s.done()
		s.done = nil
	}
	return nil
}

// open asks for t's ciphertext from byte from on: as several ranges at
// once when the file is large enough, the store honours Range and fewer
// than MultiStreamFiles files stream so already; else as one answer. A
// store that ignores Range is remembered, and asked for whole objects
// from then on.
func (f *Fetcher) open(ctx context.Context, t Target, from int64) (*apiclient.Object, error) {
	single := func() (*apiclient.Object, error) {
		if from > 0 {
			return f.limited(ctx)(f.Client.DownloadFileFrom(ctx, t.FileID, from))
		}
		return f.limited(ctx)(f.Client.DownloadFile(ctx, t.FileID))
	}
	if f.Streams < 2 || t.Size < 0 || t.Size-from <= f.streamAbove() || f.noRange.Load() {
		return single()
	}
	if !f.ticket() {
		// Every multi-stream place is taken: one stream for now, taken over
		// by several ranges from a chunk's edge once a place frees up, so a
		// large file started late is not the run's long pole.
		obj, err := single()
		if err == nil && (from == 0 && obj.Status == 200 && obj.Length == t.Size ||
			from > 0 && rangeIs(obj, from, t.Size-1, t.Size)) {
			obj.Body = &upgrading{f: f, ctx: ctx, id: t.FileID, body: obj.Body, url: obj.URL, etag: obj.ETag,
				pos: from, next: from, total: t.Size}
		}
		return obj, err
	}
	seg := int64(SegmentChunks) * WireChunk
	end := min(from+seg, t.Size) - 1
	obj, err := f.limited(ctx)(f.Client.DownloadFileRange(ctx, t.FileID, from, end))
	switch {
	case err != nil:
		f.unticket()
		return nil, err
	case obj.Status == 200:
		f.unticket()
		f.noRange.Store(true)
		return obj, nil // the whole object: the caller takes it from byte 0
	case !rangeIs(obj, from, end, t.Size):
		f.unticket()
		if from > 0 {
			return obj, nil // the caller sees it does not continue, and starts over
		}
		// Not the object announced (another size, say): one answer, whose
		// checks name what is wrong.
		obj.Body.Close()
		return single()
	}
	sg := f.newSegmented(ctx, t.FileID, obj, from, t.Size, seg, f.Streams)
	sg.done = f.unticket
	return &apiclient.Object{Body: sg, Length: t.Size - from, Status: 206, ETag: obj.ETag,
		ContentRange: fmt.Sprintf("bytes %d-%d/%d", from, t.Size-1, t.Size)}, nil
}

func (f *Fetcher) multiFiles() int {
	if f.MultiFiles > 0 {
		return f.MultiFiles
	}
	return MultiStreamFiles
}

func (f *Fetcher) streamAbove() int64 {
	if f.StreamAbove > 0 {
		return f.StreamAbove
	}
	return DefaultStreamAbove
}

// ticket takes one of the MultiStreamFiles places, if one is free.
func (f *Fetcher) ticket() bool {
	f.multiOnce.Do(func() { f.multi = make(chan struct{}, f.multiFiles()) })
	select {
	case f.multi <- struct{}{}:
		return true
	default:
		return false
	}
}

func (f *Fetcher) unticket() { <-f.multi }

// takeBuffer returns a segment buffer a closed file gave back, or nil.
// The run's files share them, so memory stays at the segments in flight
// instead of growing with garbage between collections.
func (f *Fetcher) takeBuffer() []byte {
	f.bufOnce.Do(f.makeBuffers)
	select {
	case b := <-f.bufs:
		return b[:0]
	default:
		return nil
	}
}

// giveBuffer keeps b for the next file, if there is room.
func (f *Fetcher) giveBuffer(b []byte) {
	if b == nil {
		return
	}
	f.bufOnce.Do(f.makeBuffers)
	select {
	case f.bufs <- b:
	default:
	}
}

func (f *Fetcher) makeBuffers() {
	f.bufs = make(chan []byte, f.multiFiles()*(max(f.Streams, 1)+1))
}

// upgrading reads one stream of an object and, at a chunk's edge, when a
// multi-stream place has come free and enough is left, goes on with
// several ranges from there. A switch that cannot be made (the range
// request fails or answers another object) keeps the one stream to the
// end, and is not tried again.
type upgrading struct {
	f     *Fetcher
	ctx   context.Context
	id    int64
	body  io.ReadCloser
	url   string // the store's address that answered, if known
	etag  string
	pos   int64 // the object's byte the body gives next
	next  int64 // the next chunk edge to try at
	total int64
	up    bool // several ranges now
	stay  bool // a switch failed: one stream to the end
}

func (u *upgrading) Read(p []byte) (int, error) {
	if !u.up && !u.stay {
		if u.pos == u.next {
			u.next = min(u.pos+WireChunk, u.total)
			u.try()
		}
		// Stop at the next edge, to look again there; past the last one
		// (the object's end) the read goes through, or a reader waiting
		// for its end of file would be handed empty reads forever.
		if !u.up && !u.stay && u.next > u.pos && int64(len(p)) > u.next-u.pos {
			p = p[:u.next-u.pos]
		}
	}
	n, err := u.body.Read(p)
	u.pos += int64(n)
	return n, err
}

// try switches to several ranges from u.pos, if a place is free.
func (u *upgrading) try() {
	if u.total-u.pos <= u.f.streamAbove() || !u.f.ticket() {
		return
	}
	seg := int64(SegmentChunks) * WireChunk
	end := min(u.pos+seg, u.total) - 1
	var obj *apiclient.Object
	var err error
	if u.url != "" {
		obj, err = u.f.limited(u.ctx)(u.f.Client.DownloadObjectRange(u.ctx, u.url, u.pos, end))
	} else {
		obj, err = u.f.limited(u.ctx)(u.f.Client.DownloadFileRange(u.ctx, u.id, u.pos, end))
	}
	if err != nil || !rangeIs(obj, u.pos, end, u.total) || u.etag != "" && obj.ETag != u.etag {
		if err == nil {
			if obj.Status == 200 {
				u.f.noRange.Store(true)
			}
			obj.Body.Close()
		}
		u.f.unticket()
		u.stay = true
		return
	}
	u.body.Close()
	sg := u.f.newSegmented(u.ctx, u.id, obj, u.pos, u.total, seg, u.f.Streams)
	sg.done = u.f.unticket
	u.body, u.up = sg, true
}

func (u *upgrading) Close() error { return u.body.Close() }
