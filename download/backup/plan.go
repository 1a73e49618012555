package backup

import (
	"context"
	"fmt"
	"sort"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/retry"
)

// spaceMargin is what quak keeps free beyond the bytes it will download:
// room for sidecars, the state and the file system's own needs.
func spaceMargin(need int64) int64 { return 100<<20 + need/100 }

// checkSpace lists what changed (one extra listing of the changed albums
// only) and refuses to start when the bytes to download, plus a margin,
// exceed the free space.
func (r *run) checkSpace(ctx context.Context, albums map[int64]*catalog.Album) error {
	need, big, err := r.plan(ctx, albums)
	if err != nil || need == 0 {
		return err
	}
	free, err := r.o.FreeSpace(r.dir)
	if err != nil {
		return nil //nolint:nilerr // an unknown free space is no reason to refuse
	}
	if margin := spaceMargin(need); need+margin > free {
		return &DirError{Dir: r.o.Dir, Reason: fmt.Sprintf(
			"needs %s for what is new (and %s to spare), but its file system has %s free; the largest is file %d in album %q (%s, as the server announces it): free some space, narrow the backup (--albums, --since, …), or pass --no-space-check",
			BytesText(need), BytesText(margin), BytesText(free), big.id, big.album, BytesText(big.size))}
	}
	return nil
}

// largest is the biggest file a plan would download, named in a refusal.
type largest struct {
	id    int64
	album string
	size  int64
}

// plan returns the plaintext bytes this run would download (retried and
// newly chosen files, and every new or changed file in changed albums,
// each file once) and the largest of those files. An album whose listing
// fails is left out of the count (the sync reports it).
func (r *run) plan(ctx context.Context, albums map[int64]*catalog.Album) (int64, largest, error) {
	seen := map[int64]bool{}
	var total int64
	var big largest
	consider := func(raw *apiclient.File, a *catalog.Album) error {
		if raw.IsDeleted || seen[raw.ID] {
			return nil
		}
		sf, err := r.st.File(raw.ID)
		if err != nil {
			return err
		}
		isNew := fresh(sf)
		if !isNew && sf.Header == keys.EncodeB64(raw.File.DecryptionHeader) {
			return nil // saved, same content
		}
		if isNew && r.o.Filter.NarrowsFiles() {
			// Only the file filters need the metadata decrypted.
			it, err := catalog.OpenItem(raw, a)
			if err != nil || !r.takeFile(it) {
				return nil //nolint:nilerr // left out, or it will fail as a file: nothing to download
			}
		}
		if raw.Info != nil && raw.Info.FileSize > 0 {
			seen[raw.ID] = true
			size := plainSize(raw.Info.FileSize)
			total += size
			if size > big.size {
				big = largest{id: raw.ID, album: a.Name, size: size}
			}
		}
		return nil
	}
	pending, err := r.pendingFiles()
	if err != nil {
		return 0, big, err
	}
	for _, f := range pending {
		if a := albums[f.Pending.CollectionID]; a != nil && !a.Deleted && r.takeAlbum(a) {
			if err := consider(f.Pending, a); err != nil {
				return 0, big, err
			}
		}
	}
	ids := make([]int64, 0, len(albums))
	for id := range albums {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		a := albums[id]
		if a.Deleted || !r.takeAlbum(a) {
			continue
		}
		since, list := int64(0), true
		if c := r.colls[id]; c != nil {
			since, _, list = listFrom(a, c)
		}
		for list {
			var page *apiclient.DiffPage
			err := retry.Do(ctx, r.fetcher.Policy, func(ctx context.Context) error {
				var err error
				page, err = r.o.Client.Diff(ctx, id, since)
				return err
			})
			if err := r.diskError(err); fatal(ctx, err) {
				return 0, big, fmt.Errorf("listing what is new in album %d: %w", id, err)
			}
			// An album's failed listing counts toward an outage like a
			// file's: a server gone stops the plan after a few albums.
			if uerr := r.down.observe(ctx, err); uerr != nil {
				return 0, big, uerr
			}
			if err != nil {
				break // the sync lists it again and reports it: one album never stops the run
			}
			for i := range page.Diff {
				if err := consider(&page.Diff[i], a); err != nil {
					return 0, big, err
				}
			}
			next := apiclient.DiffCursor(since, page.Diff)
			if !page.HasMore || next <= since {
				break
			}
			since = next
		}
	}
	return total, big, nil
}

// BytesText is n in binary units ("13.6 MiB"), for messages.
func BytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
