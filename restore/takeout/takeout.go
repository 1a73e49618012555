package takeout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quak-photos/quak/restore"
)

// Options configure the reading of a Takeout.
type Options struct {
	// IncludePartner imports the photos a partner account shared, which
	// Google exports with the account's own.
	IncludePartner bool
	// Location is the time zone of dates that carry none (an Exif date
	// without its offset, a date in a file's name), as Ente's uploader
	// takes them in the local one (default time.Local).
	Location *time.Location
	// Now is the clock that rules out dates in the future (default
	// time.Now).
	Now func() time.Time
	// Concurrency is how many originals are read at once (default 4), and
	// how many tgz parts are read at once.
	Concurrency int

	open func(string) (partFile, error) // the parts' files (tests count the bytes read)
}

func (o *Options) defaults() {
	if o.Location == nil {
		o.Location = time.Local
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
}

// Takeout is a Takeout read and planned: what it holds to import, and the
// report of how it was understood. It is the restore.Source of an import;
// Close releases its parts.
type Takeout struct {
	Report    *Report
	Albums    []restore.ImportAlbum
	Originals []*restore.Original
	parts     []*part
	items     map[*restore.Original]*item
	o         Options
	mu        sync.Mutex // guards the items' taken marks while parts are read

	allFolders []*folder
	noteCounts map[string]int
}

// Open reads the Takeout in paths: the names and sizes of every part's
// entries, and every metadata JSON (a tgz is read through once for them,
// and each of its photos hashed on the way). Errors: a path that does not
// exist or is not a Takeout part (ErrNotTakeout); a part that is damaged
// is named in the report, and what it holds whole is used.
func Open(ctx context.Context, paths []string, o Options) (*Takeout, error) {
	o.defaults()
	t := &Takeout{Report: &Report{}, o: o, items: map[*restore.Original]*item{}}
	for _, path := range paths {
		p, err := openPart(path, &o)
		if err != nil {
			t.Close()
			if errors.Is(err, os.ErrNotExist) {
				return nil, &PartError{Path: path, Err: errors.New("does not exist")}
			}
			return nil, err
		}
		p.report, p.index = newPartReport(p), len(t.parts)
		t.parts = append(t.parts, p)
		t.Report.Parts = append(t.Report.Parts, p.report)
	}
	s := newScanned()
	if err := t.scan(ctx, s); err != nil {
		t.Close()
		return nil, err
	}
	t.plan(ctx, s)
	return t, nil
}

// scan lists every part: zips and folders one after another, tgz parts
// (a full pass each) several at once.
func (t *Takeout) scan(ctx context.Context, s *scanned) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(t.o.Concurrency)
	for _, p := range t.parts {
		switch p.kind {
		case kindZip:
			if err := p.scanZip(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", p.path, err)
			}
		case kindDir:
			if err := p.scanDir(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", p.path, err)
			}
		case kindTar:
			g.Go(func() error { return p.scanTar(gctx, s, t.o.Location) })
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	s.keepPhotos()
	return ctx.Err()
}

// Close releases the parts' files.
func (t *Takeout) Close() {
	for _, p := range t.parts {
		p.close()
	}
}
