package thumbnails

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"sort"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// infoBatch is how many file ids go into one POST /files/info.
const infoBatch = 200

// maxThumbnail bounds what quak reads of a thumbnail object; Ente's are
// about 100 KiB, and a body beyond this is not a thumbnail.
const maxThumbnail = 16 << 20

// candidate is an owned file to check, with what repairing it needs.
type candidate struct {
	item         *catalog.Item
	album        string
	collectionID int64 // an album that holds it, for re-reading the file
	// hint is files.info's thumbSize (the size at upload), or 0 when the
	// server did not say: a first guess at the recorded size, which is never
	// larger unless the thumbnail was replaced by a larger one (museum
	// refuses that).
	hint int64
	// base is the original as Ente's apps display it, at most 720 px, kept
	// between the content check and the repair of one file; far is how far
	// the old thumbnail is from it (apart).
	base image.Image
	far  float64
	// budget is the thumbnail object's size as museum records it
	// (object_keys.size), the size rule's bound, once learned; -1 before.
	budget int64
	// unreadable marks a file whose entry could not be decrypted in any
	// album (reported once, never checked), and err says why.
	unreadable bool
	err        error
}

// list walks every album the account can see and returns the owned files
// (each once) in the chosen albums, in id order. Files owned by others are
// counted in SharedIn; an album that cannot be opened is counted and
// reported, and its files go unchecked.
func (r *run) list(ctx context.Context) ([]*candidate, error) {
	var colls []apiclient.Collection
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		var err error
		colls, err = r.o.Client.Collections(ctx, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing albums: %w", err)
	}
	sort.Slice(colls, func(i, j int) bool { return colls[i].ID < colls[j].ID })
	owned := map[int64]*candidate{}
	shared := map[int64]bool{}
	for i := range colls {
		if colls[i].IsDeleted {
			continue
		}
		a, err := catalog.OpenAlbum(&colls[i], r.o.Keys)
		if err == nil && !r.o.Albums.Take(a.ID, a.Name) {
			continue
		}
		if err == nil {
			err = r.listAlbum(ctx, a, owned, shared)
		}
		if errors.Is(err, errs.ErrNotLoggedIn) || ctx.Err() != nil {
			return nil, err
		}
		if err != nil {
			r.sum.AlbumsFailed++
			name := ""
			if a != nil {
				name = a.Name
			}
			r.emit(Event{Album: name, Err: fmt.Errorf("album %d could not be listed: %w", colls[i].ID, err)})
		}
	}
	out := make([]*candidate, 0, len(owned))
	var unreadable []int64
	for id, c := range owned {
		if c.unreadable {
			unreadable = append(unreadable, id)
		} else {
			out = append(out, c)
		}
	}
	sort.Slice(unreadable, func(i, j int) bool { return unreadable[i] < unreadable[j] })
	for _, id := range unreadable {
		r.record(Event{FileID: id, Album: owned[id].album, Class: Unknown, Action: Reported, Err: owned[id].err})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].item.FileID < out[j].item.FileID })
	out = r.only(out)
	if err := r.recordedSizes(ctx, out); err != nil {
		return nil, err
	}
	r.sum.SharedIn = len(shared)
	return out, nil
}

// only keeps the files --ids names, and reports the ids that are not among
// the account's own files in the albums checked.
func (r *run) only(cs []*candidate) []*candidate {
	if len(r.o.IDs) == 0 {
		return cs
	}
	want := map[int64]bool{}
	for _, id := range r.o.IDs {
		want[id] = true
	}
	var out []*candidate
	for _, c := range cs {
		if want[c.item.FileID] {
			out = append(out, c)
			delete(want, c.item.FileID)
		}
	}
	missing := make([]int64, 0, len(want))
	for id := range want {
		missing = append(missing, id)
	}
	sort.Slice(missing, func(i, j int) bool { return missing[i] < missing[j] })
	for _, id := range missing {
		r.record(Event{FileID: id, Class: Unknown, Action: Reported, Err: errNotOwned})
	}
	return out
}

// errNotOwned reports an --ids file that is not the account's own in the
// albums checked (another's, trashed, deleted, or never there).
var errNotOwned = errors.New("not one of your files in the albums checked")

// listAlbum adds the album's live entries to owned or shared.
func (r *run) listAlbum(ctx context.Context, a *catalog.Album, owned map[int64]*candidate, shared map[int64]bool) error {
	for since := int64(0); ; {
		var page *apiclient.DiffPage
		err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
			var err error
			page, err = r.o.Client.Diff(ctx, a.ID, since)
			return err
		})
		if err != nil {
			return err
		}
		for i := range page.Diff {
			f := &page.Diff[i]
			if f.IsDeleted || (owned[f.ID] != nil && !owned[f.ID].unreadable) {
				continue
			}
			if f.OwnerID != r.o.Keys.UserID {
				shared[f.ID] = true
				continue
			}
			it, err := catalog.OpenItem(f, a)
			if err != nil {
				// One file that cannot be opened is that file's problem, not
				// the album's: report it and check the rest.
				if owned[f.ID] == nil {
					owned[f.ID] = &candidate{unreadable: true, album: a.Name, err: err}
				}
				continue
			}
			c := &candidate{item: it, album: a.Name, collectionID: a.ID, budget: -1}
			if f.Info != nil && f.Info.ThumbSize > 0 {
				c.hint = f.Info.ThumbSize
			}
			owned[f.ID] = c
		}
		next := apiclient.DiffCursor(since, page.Diff)
		if !page.HasMore || next <= since {
			return nil
		}
		since = next
	}
}

// recordedSizes asks museum (POST /files/info) for the upload sizes of
// the files whose listing did not carry them: the first guess at each
// thumbnail's recorded size. museum fails a whole batch over one id that is
// not the caller's, unknown (deleted since it was listed) or repeated, so
// only owned, unique ids are sent, and a refused batch is split in halves
// until the ids it refuses are found and left without a guess.
func (r *run) recordedSizes(ctx context.Context, cs []*candidate) error {
	var ask []*candidate
	for _, c := range cs {
		if c.hint <= 0 {
			ask = append(ask, c)
		}
	}
	for start := 0; start < len(ask); start += infoBatch {
		if err := r.infoBatch(ctx, ask[start:min(start+infoBatch, len(ask))]); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) infoBatch(ctx context.Context, batch []*candidate) error {
	ids := make([]int64, len(batch))
	for i, c := range batch {
		ids[i] = c.item.FileID
	}
	var info map[int64]apiclient.FileInfo
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		var err error
		info, err = r.o.Client.FilesInfo(ctx, ids)
		return err
	})
	var ae *errs.ApiError
	if errors.As(err, &ae) && (ae.Status == 400 || ae.Status == 403) {
		if len(batch) == 1 {
			return nil // gone since it was listed: checked without a guess
		}
		half := len(batch) / 2
		if err := r.infoBatch(ctx, batch[:half]); err != nil {
			return err
		}
		return r.infoBatch(ctx, batch[half:])
	}
	if err != nil {
		return fmt.Errorf("reading recorded sizes: %w", err)
	}
	for _, c := range batch {
		if fi, ok := info[c.item.FileID]; ok && fi.ThumbSize > 0 {
			c.hint = fi.ThumbSize
		}
	}
	return nil
}

// errCut reports a thumbnail whose body failed to authenticate and was not
// the size museum has on record for the object: it was cut or padded on the
// way, which is the network's doing.
var errCut = errors.New("the thumbnail arrived cut or padded")

// check classifies c's thumbnail. Only two 404s in a row from the object
// store are "lost"; only bytes of the recorded size that fail to
// authenticate twice (or decrypt to no image) are "corrupt"; anything that
// might be the network is "unknown", so a flaky link never leads quak to
// replace a good thumbnail. A body cut or padded on the way proves nothing
// either way: it is looked at again, up to the retry policy's attempts.
func (r *run) check(ctx context.Context, c *candidate) (Class, []byte, error) {
	if c.item.Placeholder {
		return Placeholder, nil, nil
	}
	var lk looks
	wait := false
	for lk.gone+lk.bad < 2 && lk.cuts < max(r.o.Policy.MaxAttempts, 2) {
		if wait {
			// The look after a 404 waits: a store or proxy that answered
			// 404 for a moment has time to recover.
			if err := r.sleep(ctx, r.o.RecheckWait); err != nil {
				return Unknown, nil, err
			}
			wait = false
		}
		data, err := r.fetchThumbnail(ctx, c.item.FileID)
		var ae *errs.ApiError
		switch {
		case fatal(ctx, err):
			return Unknown, nil, err
		case errors.As(err, &ae) && ae.Status == 404 && ae.ObjectStore:
			// One 404 may be the store's or a proxy's passing mistake: only a
			// second, through a fresh redirect, confirms the loss.
			lk.gone++
			wait = true
			lk.last = err
			continue
		case errors.As(err, &ae) && ae.Status == 404:
			return NoRecord, nil, nil
		case err != nil:
			return Unknown, nil, err
		}
		plain, err := secretstream.OpenBlob(c.item.Key, c.item.Raw.Thumbnail.DecryptionHeader, data)
		if err == nil {
			if IsImage(plain) {
				return OK, plain, nil
			}
			return Corrupt, nil, errors.New("the thumbnail decrypts but is not an image")
		}
		var te *errs.TruncatedStreamError
		if !errors.Is(err, errs.ErrCorrupted) && !errors.As(err, &te) {
			return Unknown, nil, err // e.g. a malformed decryption header: not quak's to fix
		}
		if err := r.countFailure(ctx, c, len(data), err, &lk); err != nil {
			return Unknown, nil, err
		}
	}
	return lk.verdict()
}

// looks counts what the downloads of one thumbnail showed.
type looks struct {
	gone, bad, cuts int
	last            error // what the latest look found wrong
}

// verdict is the class the looks add up to: two 404s from the store
// make it lost, two failed authentications of the full object corrupt,
// anything else unknown.
func (lk *looks) verdict() (Class, []byte, error) {
	switch {
	case lk.gone == 2:
		return Lost, nil, nil
	case lk.bad == 2:
		return Corrupt, nil, lk.last
	}
	return Unknown, nil, lk.last
}

// countFailure counts a download of n bytes that failed to authenticate
// (openErr). Bytes that fail to authenticate were damaged in flight unless
// they are the object museum recorded, byte count and all; even then only
// a second download that fails too proves them corrupt.
func (r *run) countFailure(ctx context.Context, c *candidate, n int, openErr error, lk *looks) error {
	size, err := r.recordedSize(ctx, c)
	if err != nil {
		return err
	}
	if int64(n) != size {
		lk.cuts++
		lk.last = fmt.Errorf("%w: %d bytes of the %d on record", errCut, n, size)
		return nil
	}
	lk.bad++
	lk.last = openErr
	return nil
}

// LossRecheckWait is how long the helper waits, by default, before looking
// again at a thumbnail the object store answered 404 for.
const LossRecheckWait = 10 * time.Second

func (r *run) sleep(ctx context.Context, d time.Duration) error {
	if r.o.Policy.Sleep != nil {
		return r.o.Policy.Sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}

// fetchThumbnail downloads the encrypted thumbnail, retried as one unit.
// Its length is not checked against the listing's thumbSize: museum never
// updates that when a thumbnail is replaced, and a body cut on the way
// fails the stream's authentication anyway.
func (r *run) fetchThumbnail(ctx context.Context, fileID int64) ([]byte, error) {
	var data []byte
	err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
		obj, err := r.o.Client.DownloadThumbnail(ctx, fileID)
		if err != nil {
			return err
		}
		defer obj.Body.Close()
		var buf bytes.Buffer
		n, err := io.Copy(&buf, io.LimitReader(obj.Body, maxThumbnail+1))
		if err != nil {
			return err
		}
		if n > maxThumbnail {
			return fmt.Errorf("thumbnail of file %d is over %d bytes", fileID, maxThumbnail)
		}
		data = buf.Bytes()
		return nil
	})
	return data, err
}
