package backup

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
)

// spaceMargin is what quak keeps free beyond the bytes it will download:
// room for sidecars, the state and the file system's own needs.
func spaceMargin(need int64) int64 { return 100<<20 + need/100 }

// spaceCheck refuses to start downloading what does not fit: it lists
// what changed first (one extra listing of the changed albums only).
type spaceCheck struct {
	st        *state.Store
	lib       Library
	policy    retry.Policy
	root      string // DIR, absolute
	shown     string // DIR as the run was given it
	tmp       string // DIR/.quak/tmp
	filter    filter.Set
	albums    *albumSet
	down      *outage
	freeSpace func(dir string) (int64, error)
}

// check lists what changed and refuses to start when the bytes to
// download, plus a margin, exceed the free space.
func (sc *spaceCheck) check(ctx context.Context, albums map[int64]*catalog.Album) error {
	need, big, err := sc.plan(ctx, albums)
	if err != nil || need == 0 {
		return err
	}
	free, err := sc.freeSpace(sc.root)
	if err != nil {
		return nil //nolint:nilerr // an unknown free space is no reason to refuse
	}
	free += heldIn(sc.tmp)
	if margin := spaceMargin(need); need+margin > free {
		return &DirError{Dir: sc.shown, Reason: fmt.Sprintf(
			"needs %s for what is new (and %s to spare), but its file system has %s free; the largest is file %d in album %q (%s, as the server announces it)",
			BytesText(need), BytesText(margin), BytesText(free), big.id, big.album, BytesText(big.size)), Kind: folder.DirNoSpace}
	}
	return nil
}

// heldIn is what quak's temp folder dir holds when a run starts: the
// partial downloads it takes up and their side files. Each becomes part of
// its file or is removed, so it is room for the run, not room taken.
func heldIn(dir string) int64 {
	entries, _ := os.ReadDir(dir)
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}

// largest is the biggest file a plan would download, named in a refusal.
type largest struct {
	id    int64
	album string
	size  int64
}

// spacePlan adds up what a run would download, each file once.
type spacePlan struct {
	sc    *spaceCheck
	seen  map[int64]bool
	total int64
	big   largest
}

// consider adds raw, an entry of album a, when the run would download it:
// new, or changed since it was saved, and taken by the file filters.
func (sp *spacePlan) consider(raw *apiclient.File, a *catalog.Album) error {
	if raw.IsDeleted || sp.seen[raw.ID] {
		return nil
	}
	sf, err := sp.sc.st.File(raw.ID)
	if err != nil {
		return err
	}
	isNew := fresh(sf)
	if !isNew && sf.Header == keys.EncodeB64(raw.File.DecryptionHeader) {
		return nil // saved, same content
	}
	if isNew && sp.sc.filter.NarrowsFiles() {
		// Only the file filters need the metadata decrypted.
		it, err := catalog.OpenItem(raw, a)
		if err != nil || !takeFile(sp.sc.filter, it) {
			return nil //nolint:nilerr // left out, or it will fail as a file: nothing to download
		}
	}
	if raw.Info != nil && raw.Info.FileSize > 0 {
		sp.seen[raw.ID] = true
		size := plainSize(raw.Info.FileSize)
		sp.total += size
		if size > sp.big.size {
			sp.big = largest{id: raw.ID, album: a.Name, size: size}
		}
	}
	return nil
}

// plan returns the plaintext bytes this run would download (retried and
// newly chosen files, and every new or changed file in changed albums,
// each file once) and the largest of those files. An album whose listing
// fails is left out of the count (the sync reports it).
func (sc *spaceCheck) plan(ctx context.Context, albums map[int64]*catalog.Album) (int64, largest, error) {
	sp := &spacePlan{sc: sc, seen: map[int64]bool{}}
	pending, err := pendingFiles(sc.st)
	if err != nil {
		return 0, sp.big, err
	}
	for _, f := range pending {
		if a := albums[f.Pending.CollectionID]; a != nil && !a.Deleted && takeAlbum(sc.filter, a) {
			if err := sp.consider(f.Pending, a); err != nil {
				return 0, sp.big, err
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(albums)) {
		if a := albums[id]; !a.Deleted && takeAlbum(sc.filter, a) {
			if err := sc.planAlbum(ctx, a, sp); err != nil {
				return 0, sp.big, err
			}
		}
	}
	return sp.total, sp.big, nil
}

// planAlbum considers every entry of album a that this run would list.
func (sc *spaceCheck) planAlbum(ctx context.Context, a *catalog.Album, sp *spacePlan) error {
	since, list := int64(0), true
	if c := sc.albums.all()[a.ID]; c != nil {
		since, _, list = listFrom(a, c)
	}
	for pages := 1; list; pages++ {
		if pages > maxListingPages {
			return nil // the sync lists it again and fails it: one album never stops the run
		}
		var page *apiclient.DiffPage
		err := retry.Do(ctx, sc.policy, func(ctx context.Context) error {
			var err error
			page, err = sc.lib.Diff(ctx, a.ID, since)
			return err
		})
		if err := diskError(sc.shown, err); fatal(ctx, err) {
			return fmt.Errorf("listing what is new in album %d: %w", a.ID, err)
		}
		// An album's failed listing counts toward an outage like a
		// file's: a server gone stops the plan after a few albums.
		if uerr := sc.down.observe(ctx, err); uerr != nil {
			return uerr
		}
		if err != nil {
			return nil // the sync lists it again and reports it: one album never stops the run
		}
		for i := range page.Diff {
			if err := sp.consider(&page.Diff[i], a); err != nil {
				return err
			}
		}
		next := apiclient.DiffCursor(since, page.Diff)
		if !page.HasMore || next <= since {
			return nil
		}
		since = next
	}
	return nil
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

// retrier retries last run's failed files first, from their recorded
// diff entries, before anything is listed.
type retrier struct {
	st     *state.Store
	filter filter.Set
	albums *albumSet
	pages  *pager
	commit func([]*state.File, *state.Collection) error
}

// pendingFiles are the failed and left-out files whose records keep a
// diff entry to retry from.
func pendingFiles(st *state.Store) ([]*state.File, error) {
	var ids []int64
	err := st.Briefs(func(b state.Brief) error {
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
		f, err := st.File(id)
		if err != nil {
			return nil, err
		}
		if f != nil && (f.Status == state.Failed || f.Status == state.Skipped) && f.Pending != nil {
			out = append(out, f)
		}
	}
	return out, nil
}

// retry retries last run's failed files first, from their recorded diff
// entries (in every album that listed them), before anything is listed;
// and files earlier filters left out that this run's filters take.
func (r *retrier) retry(ctx context.Context, albums map[int64]*catalog.Album) error {
	byAlbum, err := r.entries(albums)
	if err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(byAlbum)) {
		files, _, err := r.pages.apply(ctx, albums[id], r.albums.all()[id], byAlbum[id])
		if cerr := r.commit(files, nil); cerr != nil {
			return errors.Join(err, cerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// entries are the entries to retry, by album: every pending entry of a
// failed file in an album this run takes, and of a left-out file that
// this run's filters take.
func (r *retrier) entries(albums map[int64]*catalog.Album) (map[int64][]apiclient.File, error) {
	pending, err := pendingFiles(r.st)
	if err != nil {
		return nil, err
	}
	byAlbum := map[int64][]apiclient.File{}
	for _, f := range pending {
		for _, p := range append([]*apiclient.File{f.Pending}, f.PendingAlso...) {
			a := albums[p.CollectionID]
			if a == nil || a.Deleted || r.albums.all()[a.ID] == nil || !takeAlbum(r.filter, a) {
				continue
			}
			if f.Status == state.Skipped {
				if it, err := catalog.OpenItem(p, a); err != nil || !takeFile(r.filter, it) {
					continue // still left out
				}
			}
			byAlbum[a.ID] = append(byAlbum[a.ID], *p)
		}
	}
	return byAlbum, nil
}
