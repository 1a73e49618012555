package takeout

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/quak-photos/quak/restore"
)

// wanted is an entry of a tgz that an original to give is made of.
type wanted struct {
	it *item
	pl *placement
	i  int // which part of the placement
}

// stream is a tgz's second pass: it reads the part from its start and puts
// each original whose entry streams past, the first copy of each; a live
// photo's first half is held until its other half comes, here or in another
// part. It stops after the last entry it wants.
func (t *Takeout) stream(ctx context.Context, p *part, its []*item, pending *halves, put restore.PutFunc) error {
	byPos := map[int][]wanted{}
	last := -1
	for _, it := range its {
		for _, pl := range it.places {
			for i, e := range pl.parts {
				if e.p == p {
					byPos[e.pos] = append(byPos[e.pos], wanted{it: it, pl: pl, i: i})
					last = max(last, e.pos)
				}
			}
		}
	}
	ts, err := p.openTar()
	if err != nil {
		return nil // its originals are failed as not given
	}
	defer ts.close()
	for pos := -1; pos < last; {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := ts.next(&pos, func(*tar.Header) {})
		if err != nil {
			return nil
		}
		for _, w := range byPos[pos] {
			if err := t.streamed(ctx, w, ts.tr, pending, put); err != nil {
				var se *restore.SourceError
				if errors.As(err, &se) {
					// The stream is broken from here: what it did not give
					// is failed as its part's damage, unless another part
					// gives it.
					t.untake(w.it)
					p.fail(fmt.Errorf("damaged in its second reading: %w", err))
					return nil
				}
				return err
			}
		}
	}
	return nil
}

// streamed puts the original of one wanted entry as it streams past, or
// holds a live photo's first half.
func (t *Takeout) streamed(ctx context.Context, w wanted, r io.Reader, pending *halves, put restore.PutFunc) error {
	t.mu.Lock()
	taken := w.it.taken
	t.mu.Unlock()
	if taken {
		return nil
	}
	e := w.pl.parts[w.i]
	if len(w.pl.parts) == 1 {
		t.take(w.it)
		return put(ctx, w.it.o, []io.Reader{t.reader(w.it, 0, e, r)})
	}
	other := w.pl.parts[1-w.i]
	readers := make([]io.Reader, 2)
	readers[w.i] = t.reader(w.it, w.i, e, r)
	if other.p.kind != kindTar {
		rc, err := other.p.openEntry(other)
		if err != nil {
			return &restore.SourceError{Where: other.where(), Err: err}
		}
		defer func() { _ = rc.Close() }()
		readers[1-w.i] = t.reader(w.it, 1-w.i, other, rc)
		t.take(w.it)
		return put(ctx, w.it.o, readers)
	}
	held, ok := pending.take(w.pl, 1-w.i)
	if !ok {
		b, err := io.ReadAll(readers[w.i])
		if err != nil {
			return err
		}
		if int64(len(b)) != e.size {
			return &restore.SourceError{Where: e.where(), Err: fmt.Errorf("%d bytes, not %d", len(b), e.size)}
		}
		pending.hold(w.pl, w.i, b)
		return nil
	}
	readers[1-w.i] = t.reader(w.it, 1-w.i, other, bytes.NewReader(held))
	t.take(w.it)
	return put(ctx, w.it.o, readers)
}

func (t *Takeout) take(it *item) {
	t.mu.Lock()
	defer t.mu.Unlock()
	it.taken = true
}

func (t *Takeout) untake(it *item) {
	t.mu.Lock()
	defer t.mu.Unlock()
	it.taken = false
}

// hold keeps half i of a live photo's placement.
func (h *halves) hold(pl *placement, i int, b []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.held[pl] == nil {
		h.held[pl] = make([][]byte, 2)
	}
	h.held[pl][i] = b
}

// take hands over half i of a placement, if held.
func (h *halves) take(pl *placement, i int) ([]byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.held[pl]
	if b == nil || b[i] == nil {
		return nil, false
	}
	delete(h.held, pl)
	return b[i], true
}
