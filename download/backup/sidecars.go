package backup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// partFile is a sidecar of a saved part: its name, whether this run's
// options want it, and what quak writes there.
type partFile struct {
	part, name string
	on         bool
	body       func() []byte
}

// partSidecar writes (on) or, in a full pass, removes the sidecar s of a
// part in album c, and records it in e.Sidecars as quak's. It never
// touches a saved file of that name, a file quak did not record (unless it
// holds exactly what quak would write there), nor a name that two parts'
// sidecars would share.
func (v *viewer) partSidecar(f *state.File, c *state.Collection, e *state.Entry, dir string, s partFile) (bool, error) {
	warn := func(why string) {
		if s.on {
			v.emit(Event{Kind: FileWarning, Album: c.Name, Title: f.Meta.Title, FileID: f.ID, CollectionID: c.ID,
				Err: fmt.Errorf("no sidecar %s: %s", s.name, why)})
		}
	}
	own := slices.Contains(e.Sidecars, s.name)
	p := filepath.Join(dir, s.name)
	if own && usersNow(e, p, s.name, s.body) {
		v.emit(Event{Kind: FileWarning, Album: c.Name, Title: f.Meta.Title, FileID: f.ID, CollectionID: c.ID,
			Err: fmt.Errorf("sidecar %s no longer holds what quak wrote there: left as yours, and no longer kept in step", s.name)})
		disown(e, s.name)
		return false, nil
	}
	switch {
	case v.names.taken(c.ID, s.name):
		warn("another file of the album has that name")
		disown(e, s.name)
		return false, nil
	case v.sharedSidecar(c, s.part, s.name):
		warn("another file's sidecar would have the same name")
		if own {
			disown(e, s.name)
			return removeIfExists(v.disk, p), nil
		}
		return false, nil
	case s.on:
		b := s.body()
		if !own && v.disk.exists(p) && !sameContent(p, b) {
			warn("a file quak did not write has that name")
			return false, nil
		}
		ch, err := v.writeIfDiffers(p, b)
		if err == nil {
			claim(e, s.name, b)
		}
		return ch, err
	case v.full && own:
		disown(e, s.name)
		return removeIfExists(v.disk, p), nil
	}
	return false, nil
}

// claim records name, holding b, as a sidecar of quak's in e.
func claim(e *state.Entry, name string, b []byte) {
	e.Sidecars = withName(e.Sidecars, name)
	if e.SidecarHashes == nil {
		e.SidecarHashes = map[string]string{}
	}
	e.SidecarHashes[name] = sidecarHash(b)
}

// sidecarHash is what Entry.SidecarHashes keeps of bytes quak wrote.
func sidecarHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// usersNow reports whether the sidecar name recorded in e, at path p, was
// rewritten by another tool: it is there and no longer holds the bytes
// quak last wrote, or, for a name recorded without their hash (older
// quaks), what quak would write now (body; nil: such a name counts as
// quak's, as it did then).
func usersNow(e *state.Entry, p, name string, body func() []byte) bool {
	want, ok := e.SidecarHashes[name]
	if !ok && body == nil {
		return false
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	if ok {
		return sidecarHash(b) != want
	}
	return !bytes.Equal(b, body())
}

// disown takes name out of e's sidecars: quak no longer touches it.
func disown(e *state.Entry, name string) {
	e.Sidecars = withoutName(e.Sidecars, name)
	delete(e.SidecarHashes, name)
	if len(e.SidecarHashes) == 0 {
		e.SidecarHashes = nil
	}
}

// ownHashes are the hashes of h whose names are in own.
func ownHashes(h map[string]string, own []string) map[string]string {
	var out map[string]string
	for _, n := range own {
		if v, ok := h[n]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[n] = v
		}
	}
	return out
}

// sharedSidecar reports whether name, the sidecar of part in c, would also
// be the sidecar of another saved file of c: Takeout cuts its suffix on
// long names, so NAME.EXT.s.json is both "NAME.EXT"'s (cut) and
// "NAME.EXT.s"'s (uncut).
func (v *viewer) sharedSidecar(c *state.Collection, part, name string) bool {
	base, ok := strings.CutSuffix(name, ".json")
	if !ok {
		return false
	}
	for cand := base; ; {
		if cand != part && sidecars.TakeoutName(cand) == name && v.names.taken(c.ID, cand) {
			return true
		}
		i := strings.LastIndex(cand, ".")
		if i <= 0 || len(base)-i > len(".supplemental-metadata") {
			return false
		}
		cand = cand[:i]
	}
}

// sameContent reports whether the file at path holds exactly b.
func sameContent(path string, b []byte) bool {
	old, err := os.ReadFile(path)
	return err == nil && bytes.Equal(old, b)
}

// writeIfDiffers writes b to path unless it holds exactly b already.
func (j *job) writeIfDiffers(path string, b []byte) (bool, error) {
	if sameContent(path, b) {
		return false, nil
	}
	return true, j.disk.writeFile(path, b)
}

// dropPartSidecars removes the XMP and Takeout sidecars that own records
// as quak's of a part that is gone from dir (renamed or replaced), and
// returns own without them.
func (j *job) dropPartSidecars(dir, part string, own []string, hashes map[string]string) []string {
	for _, name := range []string{sidecars.XMPName(part), sidecars.TakeoutName(part)} {
		if slices.Contains(own, name) {
			p := filepath.Join(dir, name)
			if !usersNow(&state.Entry{SidecarHashes: hashes}, p, name, nil) {
				removeIfExists(j.disk, p)
			}
			own = withoutName(own, name)
		}
	}
	return own
}
