package backup

import (
	"fmt"
	"path/filepath"

	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// A file in several albums is saved once and hard-linked into the others
// (copied where links are impossible). When its content changes, the copy
// downloaded into one album refreshes the others; a copy that cannot be
// refreshed is marked stale and refreshed by the next run.

// relinkOthers refreshes rec's live copies in albums other than c from its
// new copy in c.
func (p *placer) relinkOthers(rec *state.File, c *state.Collection) {
	for cid, e := range rec.Entries {
		if cid != c.ID && !e.Deleted {
			if err := p.relink(rec, c, cid); err != nil {
				p.relinkFailed(rec, cid, err)
			}
		}
	}
}

// relink refreshes a file's copy in album cid from its copy in c.
func (p *placer) relink(rec *state.File, c *state.Collection, cid int64) error {
	oc := p.colls[cid]
	e, src := rec.Entries[cid], rec.Entries[c.ID]
	if oc == nil || len(e.Parts) != len(src.Parts) {
		return nil
	}
	from, err := p.albumDir(c)
	if err != nil {
		return err
	}
	to, err := p.albumDir(oc)
	if err != nil {
		return err
	}
	copied := false
	for i := range src.Parts {
		cp, err := p.disk.linkOrCopy(filepath.Join(from, src.Parts[i]), filepath.Join(to, e.Parts[i]))
		if err != nil {
			return err
		}
		copied = copied || cp
	}
	e.Copy, e.Stale, e.Meta = copied, false, rec.Meta
	return p.views.writeSidecar(rec, oc, nil)
}

// relinkFailed marks rec's copy in album cid stale and counts the failure:
// the run ends partial, and the next one tries again (relinkStale).
func (p *placer) relinkFailed(rec *state.File, cid int64, err error) {
	e, oc := rec.Entries[cid], p.colls[cid]
	e.Stale = true
	album, path := "", e.Name
	if oc != nil {
		album, path = oc.Name, filepath.Join(oc.Folder, e.Name)
	}
	err = fmt.Errorf("refreshing %s with the file's new content: %w", path, err)
	p.tally.failed(folder.Failure{FileID: rec.ID, Album: album, Title: rec.Meta.Title}, cid, err)
}

// relinkStale refreshes, before anything is listed, the album copies an
// earlier run failed to refresh with their file's new content, from a
// current copy; nothing is downloaded. A copy that fails again is counted
// again.
func (p *placer) relinkStale() error {
	stale, err := p.staleFiles()
	if err != nil {
		return err
	}
	for _, f := range stale {
		src, _ := p.source(f)
		if src == nil {
			continue // no current copy: the next change of the file downloads it
		}
		var srcColl *state.Collection
		for cid, e := range f.Entries {
			if e == src {
				srcColl = p.colls[cid]
			}
		}
		rec := record(&catalog.Item{FileID: f.ID, OwnerID: f.OwnerID}, f)
		for _, cid := range sortedIDs(rec.Entries) {
			if e := rec.Entries[cid]; !e.Stale || e.Deleted || p.colls[cid] == nil {
				continue
			}
			if err := p.relink(rec, srcColl, cid); err != nil {
				if err := p.diskError(err); isDirError(err) {
					return err
				}
				p.relinkFailed(rec, cid, err)
			}
		}
		if err := p.commit([]*state.File{rec}, nil); err != nil {
			return err
		}
	}
	return nil
}

// staleFiles are the saved files with a copy an earlier run could not
// refresh.
func (p *placer) staleFiles() ([]*state.File, error) {
	var ids []int64
	err := p.st.Briefs(func(b state.Brief) error {
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
		f, err := p.st.File(id)
		if err != nil {
			return nil, err
		}
		if f != nil && saved(f) {
			stale = append(stale, f)
		}
	}
	return stale, nil
}
