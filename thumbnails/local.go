package thumbnails

import (
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/livephoto"
	"github.com/quak-photos/quak/download/state"
)

// localCopies finds originals in a quak backup folder (--from DIR).
type localCopies struct {
	dir   string
	st    *state.Store
	colls map[int64]*state.Collection
}

func openLocalCopies(dir string) (*localCopies, error) {
	f := folder.At(dir)
	st, err := f.OpenStateReadOnly()
	switch {
	case errors.Is(err, folder.ErrLocked):
		return nil, ErrBackupBusy
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s is not a quak backup folder (no %s)", dir, f.StateFileShown())
	case err != nil:
		return nil, fmt.Errorf("reading the backup in %s: %w", dir, err)
	}
	colls, err := st.Collections()
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &localCopies{dir: f.Dir, st: st, colls: colls}, nil
}

func (l *localCopies) close() { _ = l.st.Close() }

// find returns the path of it's original (a live photo's image part) in
// the backup, only when the backup holds this very content (same
// decryption header) and the bytes on disk still hash to Ente's hash.
func (l *localCopies) find(it *catalog.Item) (string, bool) {
	f, err := l.st.File(it.FileID)
	if err != nil || f == nil || f.Status != state.Saved || f.Header != keys.EncodeB64(it.Header) || it.Meta.Hash == "" {
		return "", false
	}
	want := it.Meta.Hash
	if catalog.IsLivePhoto(it.Meta) {
		img, _, ok := catalog.SplitLiveHash(want)
		if !ok {
			return "", false
		}
		want = img
	}
	cids := make([]int64, 0, len(f.Entries))
	for cid := range f.Entries {
		cids = append(cids, cid)
	}
	sort.Slice(cids, func(i, j int) bool { return cids[i] < cids[j] })
	for _, cid := range cids {
		e, c := f.Entries[cid], l.colls[cid]
		if c == nil || len(e.Parts) == 0 {
			continue
		}
		p, err := layout.Join(l.dir, c.Folder, e.Parts[0])
		if err != nil {
			continue
		}
		if sum, err := download.HashFile(p); err == nil && livephoto.HashMatches(want, sum) {
			return p, true
		}
	}
	return "", false
}
