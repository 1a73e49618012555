package backup

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

// markForRedownload turns the files in o.Redownload (found missing or
// changed on disk) into failed records with their current diff entry, so
// the run's first step, retrying failures, downloads them again in place.
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
			if c := colls[cid]; c != nil && !c.Deleted && !e.Deleted {
				cids = append(cids, cid)
			}
		}
		sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
		for _, cid := range cids {
			var f *apiclient.File
			err := retry.Do(ctx, r.o.Policy, func(ctx context.Context) error {
				var err error
				f, err = r.o.Client.CollectionFile(ctx, cid, id)
				return err
			})
			var ae *errs.ApiError
			if errors.As(err, &ae) && ae.Status == 404 {
				continue // no longer in that album; try another
			}
			if err != nil {
				return fmt.Errorf("file %d: reading its entry to download it again: %w", id, err)
			}
			sf.Status, sf.Pending, sf.Error = state.Failed, f, "missing or changed on disk"
			if err := r.st.Commit([]*state.File{sf}, nil); err != nil {
				return err
			}
			break
		}
	}
	return nil
}
