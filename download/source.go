package download

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/download/rate"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// source is where a run's downloads come from, as one stream or as
// several ranges: the client, the run's bandwidth limit, the retries of a
// range, the multi-stream places, and what the run learned of the store
// (that it answers a Range with the whole object).
type source struct {
	client  Objects
	rate    *rate.Limiter
	policy  retry.Policy // a range's own retries
	ranges  *pace.Ranges // how many ranges of one file are in flight; 1, one stream
	above   int64        // the smallest file, in ciphertext bytes, fetched as ranges, less one
	places  *places
	noRange atomic.Bool // the store answered a Range with the whole object
}

// slots is how many chunks a download's ring holds: one for each range
// in flight at the most and one being read.
func (s *source) slots() int { return s.ranges.Max() + 1 }

// open asks for t's ciphertext from byte from on: as several ranges at
// once, into the download's ring (rg), when the file is large enough, the
// store honours Range, the run's number of ranges is more than one (or the
// download's ring was left over: what it holds is read only by ranges)
// and a place is free (one of MultiStreamFiles, or for a download whose
// ring was left over one as many again); else as one answer, which goes on
// as ranges from a chunk's edge once they pay and a place is free. A store
// that ignores Range is remembered, and asked for whole objects from then
// on.
func (s *source) open(ctx context.Context, t Target, from int64, rg ringSource) (*apiclient.Object, error) {
	if s.ranges.Max() < 2 || t.Size < 0 || t.Size-from <= s.above || s.noRange.Load() {
		return s.single(ctx, t, from)
	}
	n := s.ranges.Now()
	var r *ring
	var release func()
	if n > 1 || rg.left {
		r, release = s.place(rg)
	}
	if r == nil {
		// One stream for now, taken over by several ranges from a chunk's
		// edge once they pay and a place is free, so that a large file
		// started when every place was taken is not the run's long pole.
		obj, err := s.single(ctx, t, from)
		if err == nil && (from == 0 && obj.Status == 200 && obj.Length == t.Size ||
			from > 0 && rangeIs(obj, from, t.Size-1, t.Size)) {
			obj.Body = &upgrading{obj: s.object(t.FileID, obj, t.Size), ctx: ctx, body: obj.Body, pos: from, next: from,
				ring: rg.open, window: s.ranges.Window(n)}
		}
		return obj, err
	}
	return s.fetchRanges(ctx, t, from, r, release, n)
}

// single asks for t's ciphertext from byte from on as one answer.
func (s *source) single(ctx context.Context, t Target, from int64) (*apiclient.Object, error) {
	if from > 0 {
		return s.limited(ctx)(s.client.DownloadFileFrom(ctx, t.FileID, from))
	}
	return s.limited(ctx)(s.client.DownloadFile(ctx, t.FileID))
}

// place takes a multi-stream place and the ring for a download, and
// returns the ring and how to give the place back; nil when no place is
// free or the ring cannot be had. A download whose ring an earlier
// attempt or run left may take one of as many places again beside them
// when every place is taken: what the ring holds is read only by ranges,
// and would be fetched again by one stream.
func (s *source) place(rg ringSource) (*ring, func()) {
	release, ticketed := s.places.unticket, s.places.ticket()
	if !ticketed && rg.left {
		release, ticketed = s.places.unextra, s.places.extra()
	}
	if !ticketed {
		return nil, nil
	}
	r, err := rg.open()
	if err != nil {
		release()
		return nil, nil
	}
	return r, release
}

// fetchRanges asks for t's ciphertext from byte from on as n ranges at
// once into the ring r, holding a place it gives back through untick when
// the download ends or does not go on as ranges.
func (s *source) fetchRanges(ctx context.Context, t Target, from int64, r *ring, untick func(), n int) (*apiclient.Object, error) {
	end := min(from+WireChunk, t.Size) - 1
	first := r.keptFirst(from/WireChunk, end+1-from)
	obj, err := s.limited(ctx)(s.client.DownloadFileRange(ctx, t.FileID, from+first.n, end))
	if ae := (*errs.ApiError)(nil); first.n > 0 && errors.As(err, &ae) && ae.Status == 416 {
		first = kept{} // the rest of the chunk refused: the whole chunk, then
		obj, err = s.limited(ctx)(s.client.DownloadFileRange(ctx, t.FileID, from, end))
	}
	switch {
	case err != nil:
		untick()
		return nil, err
	case obj.Status == 200:
		untick()
		s.noRange.Store(true)
		return obj, nil // the whole object: the caller takes it from byte 0
	case !rangeIs(obj, from+first.n, end, t.Size):
		untick()
		if from > 0 && first.n == 0 {
			return obj, nil // the caller sees it does not continue, and starts over
		}
		if from > 0 {
			obj.Body.Close()
			return s.limited(ctx)(s.client.DownloadFileFrom(ctx, t.FileID, from)) // the caller checks it
		}
		// Not the object announced (another size, say): one answer, whose
		// checks name what is wrong.
		obj.Body.Close()
		return s.single(ctx, t, from)
	}
	sg := newSegmented(ctx, s.object(t.FileID, obj, t.Size), obj, from, r, first, n)
	sg.done = untick
	return &apiclient.Object{Body: sg, Length: t.Size - from, Status: 206, ETag: obj.ETag,
		ContentRange: fmt.Sprintf("bytes %d-%d/%d", from, t.Size-1, t.Size)}, nil
}

// limited passes an answer's body through the run's bandwidth limit.
func (s *source) limited(ctx context.Context) func(*apiclient.Object, error) (*apiclient.Object, error) {
	return func(obj *apiclient.Object, err error) (*apiclient.Object, error) {
		if err == nil && s.rate != nil {
			obj.Body = s.rate.Reader(ctx, obj.Body)
		}
		return obj, err
	}
}

// object is the object of file id of total bytes that the answer obj
// came from, for its further ranges.
func (s *source) object(id int64, obj *apiclient.Object, total int64) *object {
	return &object{src: s, id: id, url: obj.URL, etag: obj.ETag, total: total}
}

// object is one object whose ranges a download asks for, and what every
// answer must match.
type object struct {
	src   *source
	id    int64
	etag  string
	total int64
	mu    sync.Mutex
	url   string // the store's address that answered, or "" to go through museum
}

// ask asks for bytes from through to of the object: of the store directly
// when its address is known, else through museum.
func (o *object) ask(ctx context.Context, from, to int64) (*apiclient.Object, error) {
	if url := o.address(); url != "" {
		return o.src.limited(ctx)(o.src.client.DownloadObjectRange(ctx, url, from, to))
	}
	return o.src.limited(ctx)(o.src.client.DownloadFileRange(ctx, o.id, from, to))
}

// open is ask, going through museum when the store refuses its address (a
// presigned address that expired), and from then on.
func (o *object) open(ctx context.Context, from, to int64) (*apiclient.Object, error) {
	if o.address() != "" {
		obj, err := o.ask(ctx, from, to)
		var ae *errs.ApiError
		if !errors.As(err, &ae) || (ae.Status != 401 && ae.Status != 403) {
			return obj, err
		}
		o.mu.Lock()
		o.url = "" // the presigned address expired: ask museum again
		o.mu.Unlock()
	}
	return o.ask(ctx, from, to)
}

func (o *object) address() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.url
}

// continues reports whether obj is exactly bytes from..to of the object.
func (o *object) continues(obj *apiclient.Object, from, to int64) bool {
	return rangeIs(obj, from, to, o.total) && (o.etag == "" || obj.ETag == o.etag)
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
