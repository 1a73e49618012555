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

// markForRedownload turns the files in o.Redownload (found missing or
// changed on disk) into failed records with their current diff entry, so
// the run's first step, retrying failures, downloads them again in place.
// A file no album of the backup can give its entry for is left as it is:
// named in a warning when every album answers 404 (not in it any more), a
// failure of the run when one answers 403 (museum's answer when the album
// is no longer shared with the account, and for a collaborator's file in
// the account's own album, which is still there).
func (r *run) markForRedownload(ctx context.Context) error {
	colls, err := r.st.Collections()
	if err != nil {
		return err
	}
	for _, id := range r.o.Redownload {
		sf, err := r.st.File(id)
		if err != nil {
			return err
		}
		if sf == nil {
			continue
		}
		cids := make([]int64, 0, len(sf.Entries))
		for cid, e := range sf.Entries {
			// An album marked deleted is asked too: it may be back (shared
			// again), and the server's answer says so.
			if c := colls[cid]; c != nil && !e.Deleted {
				cids = append(cids, cid)
			}
		}
		// Albums this run's filters take come first: retrying the failure
		// only downloads it from an album the run lists.
		takes := func(cid int64) bool {
			c := colls[cid]
			return r.o.Filter.TakeAlbum(filter.Album{ID: c.ID, Name: c.Name, OwnerID: c.OwnerID, Visibility: c.Visibility})
		}
		sort.Slice(cids, func(i, j int) bool {
			if ti, tj := takes(cids[i]), takes(cids[j]); ti != tj {
				return ti
			}
			return cids[i] < cids[j]
		})
		found, refused := false, false
		for _, cid := range cids {
			var f *apiclient.File
			err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
				var err error
				f, err = r.o.Client.CollectionFile(ctx, cid, id)
				return err
			})
			// An answer, even an error, shows the server is there; a
			// connection failure counts toward an outage like a file's.
			if uerr := r.down.observe(ctx, err); uerr != nil {
				return uerr
			}
			var ae *errs.ApiError
			if errors.As(err, &ae) && (ae.Status == 404 || ae.Status == 403) {
				refused = refused || ae.Status == 403
				continue // not in that album for this account any more; try another
			}
			if retry.Unreachable(err) && ctx.Err() == nil {
				// A blip, not yet an outage: the file stays missing on
				// disk, so the next run finds it again.
				r.failUnread(id, sf, colls[cid].Name, err)
				found = true
				break
			}
			if err != nil {
				return fmt.Errorf("file %d: reading its entry to download it again: %w", id, err)
			}
			sf.Status, sf.Pending, sf.Error = state.Failed, f, "missing or changed on disk"
			if err := r.st.Commit([]*state.File{sf}, nil); err != nil {
				return err
			}
			found = true
			break
		}
		if !found {
			album := ""
			for _, cid := range cids {
				album = colls[cid].Name
				break // the first, by id
			}
			if refused {
				// museum answers 403 for a collaborator's file in the
				// account's own album, though the file is still there: it is
				// missing from the backup, a failure every run until restored.
				r.failUnread(id, sf, album, errors.New("the server refuses this account its entry (403), so it cannot be downloaded again"))
				continue
			}
			r.emit(Event{Kind: FileWarning, FileID: id, Title: sf.Meta.Title, Album: album,
				Err: errors.New("missing or changed on disk, but no album gives it to this account any more: it cannot be downloaded again")})
		}
	}
	return nil
}

// failUnread counts a file missing on disk whose entry could not be read
// as failed in this run's summary; its record is left as it is.
func (r *run) failUnread(id int64, sf *state.File, album string, err error) {
	err = fmt.Errorf("missing or changed on disk; reading its entry to download it again: %w", err)
	reason := Reason(err)
	r.mu.Lock()
	r.sum.Failed++
	r.sum.Failures = append(r.sum.Failures, folder.Failure{FileID: id, Album: album, Title: sf.Meta.Title, Reason: reason, Error: err.Error()})
	r.sum.Reasons[reason]++
	r.touched[id] = true
	r.mu.Unlock()
	r.emit(Event{Kind: FileFailed, Album: album, Title: sf.Meta.Title, FileID: id, Err: err})
}
