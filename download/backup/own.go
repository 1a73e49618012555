package backup

import (
	"encoding/json"
	"os"
	"slices"
)

// The files quak keeps beside the originals are its own only by record:
// an XMP or Takeout sidecar by the entry (or date-view place) that lists
// it, an `ente export` sidecar in .meta by the file id inside it. A file
// of such a name that quak did not record is the user's (darktable writes
// NAME.EXT.xmp too), and is never rewritten, moved or removed.

// withName returns names with n added (a new slice: records share theirs).
func withName(names []string, n string) []string {
	if slices.Contains(names, n) {
		return names
	}
	return append(slices.Clip(names), n)
}

// withoutName returns names without n (a new slice).
func withoutName(names []string, n string) []string {
	out := make([]string, 0, len(names))
	for _, x := range names {
		if x != n {
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// metaOwnedBy reports whether the `ente export` sidecar at path describes
// file id (quak's, or an adopted export's of the same file), or is no
// regular file (absent; a folder in the way fails quak's write on its
// own): the only .meta JSON quak writes over or removes.
func metaOwnedBy(path string, id int64) bool {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var sc struct {
		Info struct {
			ID int64 `json:"id"`
		} `json:"info"`
	}
	return json.Unmarshal(b, &sc) == nil && sc.Info.ID == id
}
