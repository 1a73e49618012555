package takeout

import (
	"context"
	"errors"
	"hash/crc32"
	"io"

	"github.com/quak-photos/quak/apiclient/keys"
)

// headDates reads the date of the photos a live photo's pairing needs one
// for and that have none yet (no JSON, and a zip's or folder's, whose
// bytes were not read yet): from the head of each, enough for an Exif block
// or a movie whose index comes first.
func (t *Takeout) headDates(ps []*photo) {
	videos := map[string]bool{}
	images := map[string]bool{}
	for _, p := range ps {
		if fileType(p.e.base) == typeVideo {
			videos[liveName(p.e.base, false, "")] = true
		} else {
			images[liveName(p.e.base, true, "")] = true
		}
	}
	for _, p := range ps {
		if p.date != nil || p.meta() != nil || p.e.p.kind == kindTar {
			continue
		}
		isVideo := fileType(p.e.base) == typeVideo
		if isVideo && !images[liveName(p.e.base, false, "")] || !isVideo && !videos[liveName(p.e.base, true, "")] {
			continue
		}
		if d := t.headDate(p.e); d != nil {
			p.e.date = d
			p.date = &d.micros
		}
	}
}

func (t *Takeout) headDate(e *entry) *fileDate {
	r, err := e.p.openEntry(e)
	if err != nil {
		return nil
	}
	defer func() { _ = r.Close() }()
	sn := newSniffer(e.base)
	if _, err := io.CopyN(sn, r, headSize); err != nil && !errors.Is(err, io.EOF) {
		return nil
	}
	return sn.date(t.o.Location)
}

// identify gives every photo whose content another could share (a file
// of a folder part of the same size as another photo) its CRC-32 and hash
// by reading it, so that copies of one photo are told by content; it
// names each placement's content, and drops (and names) those it could not
// read.
func (t *Takeout) identify(ctx context.Context, places []*placement) []*placement {
	sizes := map[int64]int{}
	seen := map[*entry]bool{}
	for _, pl := range places {
		for _, e := range pl.parts {
			if !seen[e] {
				seen[e] = true
				sizes[e.size]++
			}
		}
	}
	bad := map[*entry]bool{}
	for e := range seen {
		if e.hasCRC || sizes[e.size] < 2 || ctx.Err() != nil {
			continue
		}
		if err := t.readIdentity(e); err != nil {
			bad[e] = true
			e.p.report.Skipped[SkipUnreadable]++
			t.note(Note{Kind: NoteSkipped, Part: e.p.path, Name: e.name, Reason: SkipUnreadable + ": " + err.Error()})
		}
	}
	kept := places[:0]
	for _, pl := range places {
		ok := true
		for _, e := range pl.parts {
			ok = ok && !bad[e]
		}
		if ok {
			pl.key = placeKey(pl.parts)
			kept = append(kept, pl)
		}
	}
	return kept
}

// readIdentity reads a folder part's file through: its hash, CRC-32 and date.
func (t *Takeout) readIdentity(e *entry) error {
	r, err := e.p.openEntry(e)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	h, c := keys.NewHash(), crc32.NewIEEE()
	sn := newSniffer(e.base)
	if _, err := io.Copy(io.MultiWriter(h, c, sn), r); err != nil {
		return err
	}
	e.hash, e.crc, e.hasCRC = keys.EncodeB64(h.Sum(nil)), c.Sum32(), true
	if e.date == nil {
		e.date = sn.date(t.o.Location)
	}
	return nil
}

// openEntry opens an entry of a zip or folder part.
func (p *part) openEntry(e *entry) (io.ReadCloser, error) {
	if p.kind == kindZip {
		return p.openZip(e)
	}
	return p.openFile(e)
}
