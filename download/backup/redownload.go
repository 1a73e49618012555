package backup

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// losses finds saved files missing or changed on disk and has them
// downloaded again in place: each becomes a failed record with its current
// diff entry, which the run retries first.
type losses struct {
	*job
}

// markForRedownload turns the files in o.Redownload (found missing or
// changed on disk) into failed records with their current diff entry, so
// the run's first step, retrying failures, downloads them again in place.
// A file no album of the backup can give its entry for is left as it is:
// named in a warning when every album answers 404 (not in it any more), a
// failure of the run when one answers 403 (museum's answer when the album
// is no longer shared with the account, and for a collaborator's file in
// the account's own album, which is still there).
func (l *losses) markForRedownload(ctx context.Context, redownload []int64) error {
	colls, err := l.st.Collections()
	if err != nil {
		return err
	}
	for _, id := range redownload {
		sf, err := l.st.File(id)
		if err != nil {
			return err
		}
		if sf != nil {
			if err := l.mark(ctx, colls, sf); err != nil {
				return err
			}
		}
	}
	return nil
}

// mark asks the albums of sf, those this run's filters take first, for
// its current entry and records it as failed with it.
func (l *losses) mark(ctx context.Context, colls map[int64]*state.Collection, sf *state.File) error {
	cids := l.albumsOf(colls, sf)
	refused := false
	for _, cid := range cids {
		var f *apiclient.File
		err := retry.Do(ctx, l.o.Policy, func(ctx context.Context) error {
			var err error
			f, err = l.o.Library.CollectionFile(ctx, cid, sf.ID)
			return err
		})
		// An answer, even an error, shows the server is there; a
		// connection failure counts toward an outage like a file's.
		if uerr := l.down.observe(ctx, err); uerr != nil {
			return uerr
		}
		var ae *errs.ApiError
		if errors.Is(err, ErrNotListed) {
			continue // the link's album does not list it now
		}
		if errors.As(err, &ae) && (ae.Status == 404 || ae.Status == 403) {
			refused = refused || ae.Status == 403
			continue // not in that album for this account any more; try another
		}
		if retry.Unreachable(err) && ctx.Err() == nil || brokenListing(err) {
			// A blip, not yet an outage, or a link's listing that could
			// not be read whole: the file stays missing on disk, so the
			// next run finds it again.
			l.failUnread(sf.ID, sf, colls[cid].Name, err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("file %d: reading its entry to download it again: %w", sf.ID, err)
		}
		sf.Status, sf.Pending, sf.Error = state.Failed, f, "missing or changed on disk"
		return l.st.Commit([]*state.File{sf}, nil)
	}
	l.cannot(colls, sf, cids, refused)
	return nil
}

// albumsOf are the albums to ask for sf's entry: those with a live entry
// of it (an album marked deleted is asked too: it may be back, shared
// again, and the server's answer says so), those this run's filters take
// first, then by id.
func (l *losses) albumsOf(colls map[int64]*state.Collection, sf *state.File) []int64 {
	cids := make([]int64, 0, len(sf.Entries))
	for cid, e := range sf.Entries {
		if c := colls[cid]; c != nil && !e.Deleted {
			cids = append(cids, cid)
		}
	}
	// Retrying the failure only downloads it from an album the run lists.
	takes := func(cid int64) bool {
		c := colls[cid]
		return l.o.Filter.TakeAlbum(filter.Album{ID: c.ID, Name: c.Name, OwnerID: c.OwnerID, Visibility: c.Visibility})
	}
	sort.Slice(cids, func(i, j int) bool {
		if ti, tj := takes(cids[i]), takes(cids[j]); ti != tj {
			return ti
		}
		return cids[i] < cids[j]
	})
	return cids
}

// cannot tells of a file no album gave its entry: a failure every run when
// one refused it (403: museum's answer for a collaborator's file in the
// account's own album, which is still there), else a warning that it is in
// no album any more.
func (l *losses) cannot(colls map[int64]*state.Collection, sf *state.File, cids []int64, refused bool) {
	album := ""
	if len(cids) > 0 {
		album = colls[cids[0]].Name
	}
	if refused {
		l.failUnread(sf.ID, sf, album, errors.New("the server refuses this account its entry (403), so it cannot be downloaded again"))
		return
	}
	l.emit(Event{Kind: FileWarning, FileID: sf.ID, Title: sf.Meta.Title, Album: album,
		Err: errors.New("missing or changed on disk, but no album gives it to this account any more: it cannot be downloaded again")})
}

// failUnread counts a file missing on disk whose entry could not be read
// as failed in this run's summary; its record is left as it is.
func (l *losses) failUnread(id int64, sf *state.File, album string, err error) {
	err = fmt.Errorf("missing or changed on disk; reading its entry to download it again: %w", err)
	l.tally.failed(folder.Failure{FileID: id, Album: album, Title: sf.Meta.Title}, 0, err)
}
