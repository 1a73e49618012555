package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// losses finds saved files missing or changed on disk and has them
// downloaded again in place: each becomes a failed record with its current
// diff entry, which the run retries first.
type losses struct {
	root   string // DIR, absolute
	st     *state.Store
	lib    Library
	policy retry.Policy // retries not told as events
	filter filter.Set
	down   *outage
	tally  *tally
}

// markForRedownload turns the files in o.Redownload (found missing or
// changed on disk) into failed records with their current diff entry, so
// the run's first step, retrying failures, downloads them again in place.
// A file no album of the backup can give its entry for is left as it is:
// named in a warning when every album answers 404 (not in it any more), a
// failure of the run when one answers 403 (museum's answer when the album
// is no longer shared with the account, and for a collaborator's file in
// the account's own album, which is still there).
func (ls *losses) markForRedownload(ctx context.Context, redownload []int64) error {
	colls, err := ls.st.Collections()
	if err != nil {
		return err
	}
	for _, id := range redownload {
		sf, err := ls.st.File(id)
		if err != nil {
			return err
		}
		if sf != nil {
			if err := ls.mark(ctx, colls, sf); err != nil {
				return err
			}
		}
	}
	return nil
}

// mark asks the albums of sf, those this run's filters take first, for
// its current entry and records it as failed with it.
func (ls *losses) mark(ctx context.Context, colls map[int64]*state.Collection, sf *state.File) error {
	cids := ls.albumsOf(colls, sf)
	refused := false
	for _, cid := range cids {
		var f *apiclient.File
		err := retry.Do(ctx, ls.policy, func(ctx context.Context) error {
			var err error
			f, err = ls.lib.CollectionFile(ctx, cid, sf.ID)
			return err
		})
		// An answer, even an error, shows the server is there; a
		// connection failure counts toward an outage like a file's.
		if uerr := ls.down.observe(ctx, err); uerr != nil {
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
			ls.failUnread(sf.ID, sf, colls[cid].Name, err)
			return nil
		}
		if err != nil {
			return fmt.Errorf("file %d: reading its entry to download it again: %w", sf.ID, err)
		}
		sf.Status, sf.Pending, sf.Error = state.Failed, f, "missing or changed on disk"
		return ls.st.Commit([]*state.File{sf}, nil)
	}
	ls.cannot(colls, sf, cids, refused)
	return nil
}

// albumsOf are the albums to ask for sf's entry: those with a live entry
// of it (an album marked deleted is asked too: it may be back, shared
// again, and the server's answer says so), those this run's filters take
// first, then by id.
func (ls *losses) albumsOf(colls map[int64]*state.Collection, sf *state.File) []int64 {
	cids := make([]int64, 0, len(sf.Entries))
	for cid, e := range sf.Entries {
		if c := colls[cid]; c != nil && !e.Deleted {
			cids = append(cids, cid)
		}
	}
	// Retrying the failure only downloads it from an album the run lists.
	takes := func(cid int64) bool {
		c := colls[cid]
		return ls.filter.TakeAlbum(filter.Album{ID: c.ID, Name: c.Name, OwnerID: c.OwnerID, Visibility: c.Visibility})
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
func (ls *losses) cannot(colls map[int64]*state.Collection, sf *state.File, cids []int64, refused bool) {
	album := ""
	if len(cids) > 0 {
		album = colls[cids[0]].Name
	}
	if refused {
		ls.failUnread(sf.ID, sf, album, errors.New("the server refuses this account its entry (403), so it cannot be downloaded again"))
		return
	}
	ls.tally.emit(Event{Kind: FileWarning, FileID: sf.ID, Title: sf.Meta.Title, Album: album,
		Err: errors.New("missing or changed on disk, but no album gives it to this account any more: it cannot be downloaded again")})
}

// failUnread counts a file missing on disk whose entry could not be read
// as failed in this run's summary; its record is left as it is.
func (ls *losses) failUnread(id int64, sf *state.File, album string, err error) {
	err = fmt.Errorf("missing or changed on disk; reading its entry to download it again: %w", err)
	ls.tally.failed(folder.Failure{FileID: id, Album: album, Title: sf.Meta.Title}, 0, err)
}

// missingLocally lists the saved files a part of which is gone from its
// album folder (deleted by hand, say), so the run downloads them again and
// the backup stays whole. Entries the server deleted are not counted: no
// album gives them any more, nor stale copies (refreshed by linking). A
// whole album folder gone counts each file. Albums the run's filters leave
// out are not looked at.
func (ls *losses) missingLocally() ([]int64, error) {
	colls, err := ls.st.Collections()
	if err != nil {
		return nil, err
	}
	var out []int64
	err = ls.st.Briefs(func(b state.Brief) error {
		if b.Status != state.Saved && b.Status != state.HashMismatch {
			return nil
		}
		for _, p := range b.Places {
			c := colls[p.CollectionID]
			// A stale copy is refreshed from another album's copy by
			// every run, without a download, whether or not it is there.
			if c == nil || c.Deleted || p.Deleted || p.Stale {
				continue
			}
			// An album the run's filters leave out is left for a run
			// that takes it: this one would mark the file failed and
			// never download it.
			if !ls.filter.TakeAlbum(filter.Album{ID: c.ID, Name: c.Name, OwnerID: c.OwnerID, Visibility: c.Visibility}) {
				continue
			}
			if partGone(ls.root, c.Folder, p.Name, p.Parts) {
				out = append(out, b.ID)
				return nil
			}
		}
		return nil
	})
	return out, err
}

// partGone reports whether a part of an entry (named name, of parts) is
// missing from folder.
func partGone(dir, folder, name string, parts []string) bool {
	if len(parts) == 0 {
		parts = []string{name}
	}
	for _, part := range parts {
		p, err := layout.Join(dir, folder, part)
		if err != nil {
			return false
		}
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}
