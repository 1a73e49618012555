package download

import (
	"context"
	"io"
	"os"

	"github.com/quak-photos/quak/apiclient"
)

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
	ring  func() (*os.File, error)
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
	file, err := u.ring()
	if err != nil {
		u.f.unticket()
		u.stay = true
		return
	}
	end := min(u.pos+WireChunk, u.total) - 1
	var obj *apiclient.Object
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
	sg := u.f.newSegmented(u.ctx, u.id, obj, u.pos, u.total, file, kept{})
	sg.done = u.f.unticket
	u.body, u.up = sg, true
}

func (u *upgrading) Close() error { return u.body.Close() }

// fromRing is its ranges' fromRing, once it goes on as ranges.
func (u *upgrading) fromRing(j int64) bool {
	sg, ok := u.body.(*segmented)
	return ok && sg.fromRing(j)
}

// forgetKept is its ranges' forgetKept.
func (u *upgrading) forgetKept(j int64) {
	if sg, ok := u.body.(*segmented); ok {
		sg.forgetKept(j)
	}
}
