package takeout

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/quak-photos/quak/restore"
)

// Read gives the import the bytes of each original in want (restore.Source):
// those a zip or folder holds from Concurrency goroutines, in the order
// they lie in their parts, and those only a tgz holds in one more pass over
// each such tgz, in archive order, as they stream past. A copy that cannot
// be read (a damaged entry) gives way to another copy of the same content,
// where there is one.
func (t *Takeout) Read(ctx context.Context, want []*restore.Original, put restore.PutFunc, fail func(*restore.Original, error)) error {
	var random []*item
	streams := map[*part][]*item{}
	for _, o := range want {
		it := t.items[o]
		if it == nil {
			fail(o, errors.New("not an original of this Takeout"))
			continue
		}
		it.taken = false
		if it.randomAccess() != nil {
			random = append(random, it)
			continue
		}
		for _, p := range it.tarParts() {
			streams[p] = append(streams[p], it)
		}
	}
	sort.SliceStable(random, func(i, j int) bool {
		return before(random[i].randomAccess().parts[0], random[j].randomAccess().parts[0])
	})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return t.readRandom(gctx, random, put, fail) })
	tars := make(chan struct{}, t.o.Concurrency)
	pending := &halves{held: map[*placement][][]byte{}}
	for _, p := range t.parts {
		if its := streams[p]; len(its) > 0 {
			g.Go(func() error {
				tars <- struct{}{}
				defer func() { <-tars }()
				return t.stream(gctx, p, its, pending, put)
			})
		}
	}
	err := g.Wait()
	for _, o := range want {
		if it := t.items[o]; it != nil && !it.taken && ctx.Err() == nil {
			fail(o, t.lostCause(it))
		}
	}
	return errors.Join(err, ctx.Err())
}

// randomAccess is the first placement of an item whose entries all lie in
// zips or folders, or nil.
func (it *item) randomAccess() *placement {
	for _, pl := range it.places {
		if pl.random() {
			return pl
		}
	}
	return nil
}

// tarParts are the tgz parts that hold an entry of an item.
func (it *item) tarParts() []*part {
	var out []*part
	for _, pl := range it.places {
		for _, e := range pl.parts {
			if e.p.kind == kindTar && !containsPart(out, e.p) {
				out = append(out, e.p)
			}
		}
	}
	return out
}

func containsPart(ps []*part, p *part) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// lostCause says why an original was never given: its part's damage.
func (t *Takeout) lostCause(it *item) error {
	for _, pl := range it.places {
		for _, e := range pl.parts {
			if e.p.damaged != nil {
				return &restore.SourceError{Where: e.where(), Err: fmt.Errorf("its part could not be read to it: %w", e.p.damaged)}
			}
		}
	}
	return &restore.SourceError{Where: it.o.Where, Err: errors.New("its part ended before it")}
}

// readRandom gives the items a zip or folder holds, Concurrency at once.
func (t *Takeout) readRandom(ctx context.Context, its []*item, put restore.PutFunc, fail func(*restore.Original, error)) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(t.o.Concurrency)
	for _, it := range its {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := t.giveRandom(ctx, it, put); err != nil {
				fail(it.o, err)
			}
			t.mu.Lock()
			it.taken = true
			t.mu.Unlock()
			return nil
		})
	}
	return g.Wait()
}

// giveRandom puts an item from each of its zip or folder placements in
// turn until one reads whole; it returns the last copy's error when none
// does. An import that asks for the bytes again gets them once more.
func (t *Takeout) giveRandom(ctx context.Context, it *item, put restore.PutFunc) error {
	var last error
	for _, pl := range it.places {
		if !pl.random() {
			continue
		}
		for try := 0; ; try++ {
			err := t.putPlacement(ctx, it, pl, put)
			var se *restore.SourceError
			switch {
			case errors.Is(err, restore.ErrReadAgain) && try == 0:
				continue
			case errors.Is(err, restore.ErrReadAgain):
				return &restore.SourceError{Where: it.o.Where, Err: errors.New("asked for twice more")}
			case errors.As(err, &se):
				last = err
			default:
				return nil // put, or failed by the import, which counted it
			}
			break
		}
	}
	if last == nil {
		last = &restore.SourceError{Where: it.o.Where, Err: errors.New("no copy of it could be read")}
	}
	return last
}

// random reports whether all of a placement's entries lie in zips or
// folders.
func (pl *placement) random() bool {
	for _, e := range pl.parts {
		if e.p.kind == kindTar {
			return false
		}
	}
	return true
}

// putPlacement opens a placement's entries and puts them.
func (t *Takeout) putPlacement(ctx context.Context, it *item, pl *placement, put restore.PutFunc) error {
	readers := make([]io.Reader, len(pl.parts))
	for i, e := range pl.parts {
		rc, err := e.p.openEntry(e)
		if err != nil {
			return &restore.SourceError{Where: e.where(), Err: err}
		}
		defer func() { _ = rc.Close() }()
		readers[i] = t.reader(it, i, e, rc)
	}
	return put(ctx, it.o, readers)
}

// reader wraps an entry's bytes for the import: its errors become the
// source's, and the first part of an undated original dates it once read.
func (t *Takeout) reader(it *item, i int, e *entry, r io.Reader) io.Reader {
	sr := &entryReader{r: r, e: e}
	if i == 0 && !it.dated {
		sr.sniff = newSniffer(e.base)
		sr.done = func(d *fileDate) {
			if d != nil {
				it.o.CreationTime, it.o.Offset = d.micros, d.offset
			} else {
				t.dateByName(it.o, e)
			}
			it.dated = true
		}
	}
	return sr
}

// entryReader reads one entry for the import.
type entryReader struct {
	r     io.Reader
	e     *entry
	sniff *sniffer
	done  func(*fileDate)
}

func (r *entryReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if r.sniff != nil && n > 0 {
		_, _ = r.sniff.Write(p[:n])
	}
	switch {
	case errors.Is(err, io.EOF):
		if r.done != nil {
			r.done(r.sniff.date(r.e.p.loc))
			r.done = nil
		}
	case err != nil:
		err = &restore.SourceError{Where: r.e.where(), Err: err}
	}
	return n, err
}

// halves are the live photos' first halves a tgz's stream met before the
// other half, held until it comes.
type halves struct {
	mu   sync.Mutex
	held map[*placement][][]byte
}
