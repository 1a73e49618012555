package download

import (
	"context"
	"io"

	"github.com/quak-photos/quak/download/pace"
)

// upgrading reads one stream of an object and, at a chunk's edge, when
// several ranges pay (the run's number of ranges is more than one, see
// pace.Ranges: the stream's rate is measured for it chunk by chunk), a
// multi-stream place has come free and enough is left, goes on with
// several ranges from there. A switch that cannot be made (the range
// request fails or answers another object) keeps the one stream to the
// end, and is not tried again.
type upgrading struct {
	obj    *object
	ctx    context.Context
	body   io.ReadCloser
	pos    int64 // the object's byte the body gives next
	next   int64 // the next chunk edge to try at
	up     bool  // several ranges now
	stay   bool  // a switch failed: one stream to the end
	ring   func() (*ring, error)
	window *pace.Window
}

func (u *upgrading) Read(p []byte) (int, error) {
	if !u.up && !u.stay {
		if u.pos == u.next {
			u.next = min(u.pos+WireChunk, u.obj.total)
			if n := u.window.Chunk(WireChunk); n > 1 {
				u.try(n)
			}
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

// try switches to n ranges from u.pos, if a place is free.
func (u *upgrading) try(n int) {
	src := u.obj.src
	if u.obj.total-u.pos <= src.above || !src.places.ticket() {
		return
	}
	r, err := u.ring()
	if err != nil {
		src.places.unticket()
		u.stay = true
		return
	}
	end := min(u.pos+WireChunk, u.obj.total) - 1
	obj, err := u.obj.ask(u.ctx, u.pos, end)
	if err != nil || !u.obj.continues(obj, u.pos, end) {
		if err == nil {
			if obj.Status == 200 {
				src.noRange.Store(true)
			}
			obj.Body.Close()
		}
		src.places.unticket()
		u.stay = true
		return
	}
	u.body.Close()
	sg := newSegmented(u.ctx, src.object(u.obj.id, obj, u.obj.total), obj, u.pos, r, kept{}, n)
	sg.done = src.places.unticket
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
