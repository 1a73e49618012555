package backup

import (
	"context"
	"errors"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/state"
)

// pendingFiles are the failed and left-out files whose records keep a
// diff entry to retry from.
func (j *job) pendingFiles() ([]*state.File, error) {
	var ids []int64
	err := j.st.Briefs(func(b state.Brief) error {
		if (b.Status == state.Failed || b.Status == state.Skipped) && b.Pending {
			ids = append(ids, b.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]*state.File, 0, len(ids))
	for _, id := range ids {
		f, err := j.st.File(id)
		if err != nil {
			return nil, err
		}
		if f != nil && (f.Status == state.Failed || f.Status == state.Skipped) && f.Pending != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// retryFailed retries last run's failed files first, from their recorded
// diff entries (in every album that listed them), before anything is
// listed; and files earlier filters left out that this run's filters take.
func (l *lister) retryFailed(ctx context.Context, albums map[int64]*catalog.Album, cancel context.CancelCauseFunc) error {
	byAlbum, err := l.retries(albums)
	if err != nil {
		return err
	}
	for _, id := range sortedIDs(byAlbum) {
		files, _, err := l.page(ctx, albums[id], l.colls[id], byAlbum[id], cancel)
		if cerr := l.commit(files, nil); cerr != nil {
			return errors.Join(err, cerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// retries are the entries to retry, by album: every pending entry of a
// failed file in an album this run takes, and of a left-out file that
// this run's filters take.
func (l *lister) retries(albums map[int64]*catalog.Album) (map[int64][]apiclient.File, error) {
	pending, err := l.pendingFiles()
	if err != nil {
		return nil, err
	}
	byAlbum := map[int64][]apiclient.File{}
	for _, f := range pending {
		for _, p := range append([]*apiclient.File{f.Pending}, f.PendingAlso...) {
			a := albums[p.CollectionID]
			if a == nil || a.Deleted || l.colls[a.ID] == nil || !l.takeAlbum(a) {
				continue
			}
			if f.Status == state.Skipped {
				if it, err := catalog.OpenItem(p, a); err != nil || !l.takeFile(it) {
					continue // still left out
				}
			}
			byAlbum[a.ID] = append(byAlbum[a.ID], *p)
		}
	}
	return byAlbum, nil
}
