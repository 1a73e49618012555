package backup

import (
	"context"
	"fmt"
	"os"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/retry"
)

// spaceMargin is what quak keeps free beyond the bytes it will download:
// room for sidecars, the state and the file system's own needs.
func spaceMargin(need int64) int64 { return 100<<20 + need/100 }

// checkSpace lists what changed (one extra listing of the changed albums
// only) and refuses to start when the bytes to download, plus a margin,
// exceed the free space.
func (l *lister) checkSpace(ctx context.Context, albums map[int64]*catalog.Album) error {
	need, big, err := l.plan(ctx, albums)
	if err != nil || need == 0 {
		return err
	}
	free, err := l.o.FreeSpace(l.dir)
	if err != nil {
		return nil //nolint:nilerr // an unknown free space is no reason to refuse
	}
	free += heldIn(l.tmp)
	if margin := spaceMargin(need); need+margin > free {
		return &DirError{Dir: l.o.Dir, Reason: fmt.Sprintf(
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
	l     *lister
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
	sf, err := sp.l.st.File(raw.ID)
	if err != nil {
		return err
	}
	isNew := fresh(sf)
	if !isNew && sf.Header == keys.EncodeB64(raw.File.DecryptionHeader) {
		return nil // saved, same content
	}
	if isNew && sp.l.o.Filter.NarrowsFiles() {
		// Only the file filters need the metadata decrypted.
		it, err := catalog.OpenItem(raw, a)
		if err != nil || !sp.l.takeFile(it) {
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
func (l *lister) plan(ctx context.Context, albums map[int64]*catalog.Album) (int64, largest, error) {
	sp := &spacePlan{l: l, seen: map[int64]bool{}}
	pending, err := l.pendingFiles()
	if err != nil {
		return 0, sp.big, err
	}
	for _, f := range pending {
		if a := albums[f.Pending.CollectionID]; a != nil && !a.Deleted && l.takeAlbum(a) {
			if err := sp.consider(f.Pending, a); err != nil {
				return 0, sp.big, err
			}
		}
	}
	for _, id := range sortedIDs(albums) {
		if a := albums[id]; !a.Deleted && l.takeAlbum(a) {
			if err := l.planAlbum(ctx, a, sp); err != nil {
				return 0, sp.big, err
			}
		}
	}
	return sp.total, sp.big, nil
}

// planAlbum considers every entry of album a that this run would list.
func (l *lister) planAlbum(ctx context.Context, a *catalog.Album, sp *spacePlan) error {
	since, list := int64(0), true
	if c := l.colls[a.ID]; c != nil {
		since, _, list = listFrom(a, c)
	}
	for pages := 1; list; pages++ {
		if pages > maxListingPages {
			return nil // the sync lists it again and fails it: one album never stops the run
		}
		var page *apiclient.DiffPage
		err := retry.Do(ctx, l.policy, func(ctx context.Context) error {
			var err error
			page, err = l.o.Library.Diff(ctx, a.ID, since)
			return err
		})
		if err := l.diskError(err); fatal(ctx, err) {
			return fmt.Errorf("listing what is new in album %d: %w", a.ID, err)
		}
		// An album's failed listing counts toward an outage like a
		// file's: a server gone stops the plan after a few albums.
		if uerr := l.down.observe(ctx, err); uerr != nil {
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
