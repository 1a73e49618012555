package backup

import (
	"os"
	"strings"

	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/catalog"
	"github.com/quak-photos/quak/download/livephoto"
)

// expect notes the hash of a file about to be downloaded, so that a copy
// a killed run left at its final name is recognised (leftoverLocked).
func (r *run) expect(it *catalog.Item) {
	if it.Meta.Hash == "" {
		return
	}
	r.mu.Lock()
	r.expected[it.FileID] = it.Meta.Hash
	r.mu.Unlock()
}

// leftoverLocked reports whether the file at p holds exactly the bytes of
// file fileID, which this run is downloading: what a run killed between a
// rename and its commit leaves behind, unrecorded. An `ente export`
// sidecar names such a file; with other sidecar styles nothing else does,
// and without this it would be saved a second time as name_1. r.mu is held.
func (r *run) leftoverLocked(p string, fileID int64) bool {
	want := r.expected[fileID]
	if want == "" || r.dry() {
		return false
	}
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	h, err := download.HashFile(p)
	if err != nil {
		return false
	}
	for _, w := range strings.Split(want, ":") { // a live photo's parts: image:video
		if livephoto.HashMatches(w, h) {
			return true
		}
	}
	return false
}
