package backup

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/backup/views"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// relinker keeps a file's copies in several albums the same file. A file
// in several albums is saved once and hard-linked into the others (copied
// where links are impossible). When its content changes, the copy
// downloaded into one album refreshes the others; a copy that cannot be
// refreshed is marked stale and refreshed by the next run.
type relinker struct {
	st     *state.Store
	shown  string // DIR as the run was given it
	albums *albumSet
	disk   disk
	views  *views.Keeper
	tally  *tally
	commit func([]*state.File, *state.Collection) error
}

// others refreshes rec's live copies in albums other than c from its new
// copy in c.
func (rl *relinker) others(rec *state.File, c *state.Collection) {
	for cid, e := range rec.Entries {
		if cid != c.ID && !e.Deleted {
			if err := rl.relink(rec, c, cid); err != nil {
				rl.relinkFailed(rec, cid, err)
			}
		}
	}
}

// relink refreshes a file's copy in album cid from its copy in c.
func (rl *relinker) relink(rec *state.File, c *state.Collection, cid int64) error {
	oc := rl.albums.all()[cid]
	e, src := rec.Entries[cid], rec.Entries[c.ID]
	if oc == nil || len(e.Parts) != len(src.Parts) {
		return nil
	}
	from, err := rl.albums.dir(c)
	if err != nil {
		return err
	}
	to, err := rl.albums.dir(oc)
	if err != nil {
		return err
	}
	copied := false
	for i := range src.Parts {
		cp, err := rl.disk.LinkOrCopy(filepath.Join(from, src.Parts[i]), filepath.Join(to, e.Parts[i]))
		if err != nil {
			return err
		}
		copied = copied || cp
	}
	e.Copy, e.Stale, e.Meta = copied, false, rec.Meta
	return rl.views.WriteSidecar(rec, oc, nil)
}

// relinkFailed marks rec's copy in album cid stale and counts the failure:
// the run ends partial, and the next one tries again (stale).
func (rl *relinker) relinkFailed(rec *state.File, cid int64, err error) {
	e, oc := rec.Entries[cid], rl.albums.all()[cid]
	e.Stale = true
	album, path := "", e.Name
	if oc != nil {
		album, path = oc.Name, filepath.Join(oc.Folder, e.Name)
	}
	err = fmt.Errorf("refreshing %s with the file's new content: %w", path, err)
	rl.tally.failed(folder.Failure{FileID: rec.ID, Album: album, Title: rec.Meta.Title}, cid, err)
}

// stale refreshes, before anything is listed, the album copies an
// earlier run failed to refresh with their file's new content, from a
// current copy; nothing is downloaded. A copy that fails again is counted
// again.
func (rl *relinker) stale() error {
	stale, err := rl.staleFiles()
	if err != nil {
		return err
	}
	for _, f := range stale {
		src, srcColl, _ := rl.albums.source(f)
		if src == nil {
			continue // no current copy: the next change of the file downloads it
		}
		rec := record(&catalog.Item{FileID: f.ID, OwnerID: f.OwnerID}, f)
		for _, cid := range slices.Sorted(maps.Keys(rec.Entries)) {
			if e := rec.Entries[cid]; !e.Stale || e.Deleted || rl.albums.all()[cid] == nil {
				continue
			}
			if err := rl.relink(rec, srcColl, cid); err != nil {
				if err := diskError(rl.shown, err); isDirError(err) {
					return err
				}
				rl.relinkFailed(rec, cid, err)
			}
		}
		if err := rl.commit([]*state.File{rec}, nil); err != nil {
			return err
		}
	}
	return nil
}

// staleFiles are the saved files with a copy an earlier run could not
// refresh.
func (rl *relinker) staleFiles() ([]*state.File, error) {
	var ids []int64
	err := rl.st.Briefs(func(b state.Brief) error {
		if b.Stale() && (b.Status == state.Saved || b.Status == state.HashMismatch) {
			ids = append(ids, b.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var stale []*state.File
	for _, id := range ids {
		f, err := rl.st.File(id)
		if err != nil {
			return nil, err
		}
		if f != nil && saved(f) {
			stale = append(stale, f)
		}
	}
	return stale, nil
}
