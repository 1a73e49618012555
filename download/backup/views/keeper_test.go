package views

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
)

// osDisk is a Disk straight on the file system, noting what it was asked.
type osDisk struct {
	saved   []folder.ViewOptions
	changed map[string]bool
	fail    error // every write fails with it
}

func (d *osDisk) Exists(p string) bool { _, err := os.Lstat(p); return err == nil }
func (d *osDisk) MkdirAll(dir string, m os.FileMode) error {
	if d.fail != nil {
		return d.fail
	}
	return os.MkdirAll(dir, m)
}

func (d *osDisk) WriteFile(p string, b []byte) error {
	if d.fail != nil {
		return d.fail
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func (d *osDisk) LinkOrCopy(src, dst string) (bool, error) {
	_ = os.Remove(dst)
	return false, os.Link(src, dst)
}
func (d *osDisk) Rename(from, to string) error { return os.Rename(from, to) }
func (d *osDisk) Remove(p string)              { _ = os.Remove(p) }
func (d *osDisk) Changed(dirs ...string) {
	for _, dir := range dirs {
		d.changed[dir] = true
	}
}
func (d *osDisk) RemoveDir(dir string) bool            { return os.Remove(dir) == nil }
func (d *osDisk) SaveViews(v folder.ViewOptions) error { d.saved = append(d.saved, v); return nil }

// bench is a Keeper of a backup folder in a temp dir, over a state of its
// own, with album 1 ("A") and album 2 ("B", favourites) recorded.
type bench struct {
	t       *testing.T
	dir     string
	st      *state.Store
	disk    *osDisk
	albums  map[int64]*state.Collection
	taken   map[string]bool // "cid/name"
	notes   []Note
	records int
	k       *Keeper
}

func newBench(t *testing.T, o Options) *bench {
	t.Helper()
	dir := t.TempDir()
	st, err := state.Open(filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	b := &bench{t: t, dir: dir, st: st, disk: &osDisk{changed: map[string]bool{}}, taken: map[string]bool{},
		albums: map[int64]*state.Collection{
			1: {ID: 1, Name: "A", Folder: "A", Type: "album", OwnerID: 1},
			2: {ID: 2, Name: "Favourites", Folder: "Favourites", Type: "favorites", OwnerID: 1},
		}}
	if o.Zone == nil {
		o.Zone = time.UTC
	}
	b.k = NewKeeper(Config{Dir: dir, DirName: "DIR", Options: o, UserID: 7, Store: st, Disk: b.disk,
		Albums: func() map[int64]*state.Collection { return b.albums },
		PartsExist: func(c *state.Collection, e *state.Entry) bool {
			for _, p := range e.Parts {
				if _, err := os.Stat(filepath.Join(dir, c.Folder, p)); err != nil {
					return false
				}
			}
			return len(e.Parts) > 0
		},
		Taken: func(cid int64, name string) bool { return b.taken[filepath.Join(string(rune('0'+cid)), name)] },
		Record: func(files []*state.File, c *state.Collection) error {
			b.records++
			return st.Commit(files, c)
		},
		DiskError: func(err error) error {
			if errors.Is(err, syscall.ENOSPC) {
				return &folder.DirError{Dir: "DIR", Reason: "is full", Err: err}
			}
			return err
		},
		Tell: func(n Note) { b.notes = append(b.notes, n) },
		Now:  func() time.Time { return time.Unix(1_700_000_000, 0) }})
	return b
}

// file is a saved file of id, titled title, with a copy in each album of
// cids, on disk.
func (b *bench) file(id int64, title string, cids ...int64) *state.File {
	b.t.Helper()
	lat, lon := 48.8584, 2.2945
	f := &state.File{ID: id, OwnerID: 1, Status: state.Saved, Header: "h", Entries: map[int64]*state.Entry{},
		Meta: catalog.Meta{Title: title, CreationTime: 1_600_000_000_000_000, ModificationTime: 1_600_000_100_000_000,
			Caption: "by the tower", Latitude: &lat, Longitude: &lon, Hash: "aGFzaA=="}}
	for _, cid := range cids {
		c := b.albums[cid]
		require.NoError(b.t, os.MkdirAll(filepath.Join(b.dir, c.Folder), 0o755))
		require.NoError(b.t, os.WriteFile(filepath.Join(b.dir, c.Folder, title), []byte(title), 0o644))
		f.Entries[cid] = &state.Entry{Name: title, Parts: []string{title}, Meta: f.Meta}
		b.taken[filepath.Join(string(rune('0'+cid)), title)] = true
	}
	return f
}

func (b *bench) read(rel string) string {
	got, err := os.ReadFile(filepath.Join(b.dir, rel))
	if err != nil {
		return ""
	}
	return string(got)
}

func (b *bench) write(rel, s string) {
	b.t.Helper()
	require.NoError(b.t, os.MkdirAll(filepath.Dir(filepath.Join(b.dir, rel)), 0o755))
	require.NoError(b.t, os.WriteFile(filepath.Join(b.dir, rel), []byte(s), 0o644))
}

func TestASidecarSaysWhatEnteExportSaysAndWhatTakeoutSays(t *testing.T) {
	b := newBench(t, Options{})
	f := b.file(11, "x.jpg", 1)
	f.Status = state.HashMismatch
	require.NoError(t, b.k.WriteSidecar(f, b.albums[1], nil))
	var sc map[string]any
	require.NoError(t, json.Unmarshal([]byte(b.read("A/.meta/x.jpg.json")), &sc))
	assert.Equal(t, "x.jpg", sc["title"])
	assert.Equal(t, "by the tower", sc["description"])
	assert.Equal(t, "2020-09-13T12:26:40Z", sc["creationTime"])
	assert.Equal(t, "2020-09-13T12:28:20Z", sc["modificationTime"])
	assert.Equal(t, map[string]any{"latitude": 48.8584, "longitude": 2.2945}, sc["location"])
	info := sc["info"].(map[string]any)
	assert.Equal(t, float64(11), info["id"])
	assert.Equal(t, "aGFzaA==", info["hash"])
	assert.Equal(t, []any{"x.jpg"}, info["fileNames"])
	assert.Equal(t, map[string]any{"timestamp": "1600000000", "formatted": "Sep 13, 2020, 12:26:40 PM UTC"}, sc["photoTakenTime"])
	assert.Equal(t, 48.8584, sc["geoData"].(map[string]any)["latitude"])
	assert.Equal(t, map[string]any{"collectionID": float64(1), "album": "A", "fileType": float64(0), "hashCheck": "mismatch"}, sc["quak"])
	id, names := b.k.SidecarOf(filepath.Join(b.dir, "A/.meta/x.jpg.json"))
	assert.Equal(t, int64(11), id)
	assert.Equal(t, []string{"x.jpg"}, names)
	assert.True(t, strings.HasSuffix(b.read("A/.meta/x.jpg.json"), "}\n"))

	assert.NotContains(t, sc, "visibility", "a visible file's sidecar has no visibility")
	for v, name := range map[int]string{1: "archived", 2: "hidden"} {
		f.Meta.Visibility = v
		require.NoError(t, b.k.WriteSidecar(f, b.albums[1], nil))
		assert.Contains(t, b.read("A/.meta/x.jpg.json"), `"visibility": "`+name+`"`)
	}

	bare := &state.File{ID: 12, Entries: map[int64]*state.Entry{1: {Name: "y.jpg", Parts: []string{"y.jpg"}}}}
	require.NoError(t, b.k.WriteSidecar(bare, b.albums[1], nil))
	sc = nil
	require.NoError(t, json.Unmarshal([]byte(b.read("A/.meta/y.jpg.json")), &sc))
	assert.Nil(t, sc["description"])
	assert.Nil(t, sc["location"])
	assert.NotContains(t, sc, "geoData")
	assert.Equal(t, "none", sc["quak"].(map[string]any)["hashCheck"])
}

func TestASidecarIsNeverWrittenOverAnotherFilesAndTheOldNameGoes(t *testing.T) {
	b := newBench(t, Options{})
	b.write("A/.meta/x.jpg.json", `{"info": {"id": 99}}`)
	f := b.file(11, "x.jpg", 1)
	err := b.k.WriteSidecar(f, b.albums[1], nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another file's `ente export` sidecar")
	assert.False(t, b.k.SidecarOwnedBy(filepath.Join(b.dir, "A/.meta/x.jpg.json"), 11))
	assert.True(t, b.k.SidecarOwnedBy(filepath.Join(b.dir, "A/.meta/none.json"), 11), "absent: free to write")
	assert.False(t, b.k.RemoveSidecar(filepath.Join(b.dir, "A"), "x.jpg", 11), "not its own: kept")

	f.Entries[1].Name = "z.jpg"
	f.Entries[1].Parts = []string{"z.jpg"}
	require.NoError(t, b.k.WriteSidecar(f, b.albums[1], nil))
	f.Entries[1].Name, f.Entries[1].Parts = "w.jpg", []string{"w.jpg"}
	require.NoError(t, b.k.WriteSidecar(f, b.albums[1], &state.Entry{Name: "z.jpg"}))
	assert.Empty(t, b.read("A/.meta/z.jpg.json"), "the replaced name's sidecar goes")
	assert.NotEmpty(t, b.read("A/.meta/w.jpg.json"))
	require.NoError(t, b.k.WriteSidecar(f, b.albums[1], &state.Entry{Name: "W.JPG"}))
	assert.NotEmpty(t, b.read("A/.meta/w.jpg.json"), "the same name in another case is the same file")

	changed, err := b.k.RefreshSidecar(f, b.albums[1], f.Entries[1])
	require.NoError(t, err)
	assert.False(t, changed)
	b.write("A/.meta/w.jpg.json", `{"title": "edited", "info": {"id": 11}}`)
	changed, err = b.k.RefreshSidecar(f, b.albums[1], f.Entries[1])
	require.NoError(t, err)
	assert.True(t, changed)
	assert.NotContains(t, b.read("A/.meta/w.jpg.json"), "edited")
	assert.Contains(t, b.read("A/.meta/w.jpg.json"), `"w.jpg"`)
}

func TestNoJSONInMetaWithAnotherStyleAndAnAdoptedOneGoes(t *testing.T) {
	b := newBench(t, Options{Sidecars: sidecars.None})
	b.write("A/.meta/x.jpg.json", `{"info": {"id": 11}}`)
	f := b.file(11, "x.jpg", 1)
	require.NoError(t, b.k.WriteSidecar(f, b.albums[1], nil))
	assert.Empty(t, b.read("A/.meta/x.jpg.json"))
	changed, err := b.k.RefreshSidecar(f, b.albums[1], f.Entries[1])
	require.NoError(t, err)
	assert.False(t, changed, "nothing to refresh")
}

func TestAlbumMetaNamesTheAlbumAndItsVisibility(t *testing.T) {
	b := newBench(t, Options{})
	c := b.albums[1]
	c.Visibility = 2
	require.NoError(t, b.k.WriteAlbumMeta(c))
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(b.read("A/.meta/album_meta.json")), &m))
	assert.Equal(t, map[string]any{"id": float64(1), "ownerID": float64(1), "albumName": "A", "isDeleted": false,
		"accountOwnerIDs": []any{float64(7)}, "visibility": "hidden"}, m)
	assert.Equal(t, int64(1), b.k.AlbumOf(filepath.Join(b.dir, "A")))
	assert.Zero(t, b.k.AlbumOf(filepath.Join(b.dir, "none")))
	c.Visibility = 1
	require.NoError(t, b.k.RefreshAlbumMeta(c))
	assert.Contains(t, b.read("A/.meta/album_meta.json"), `"visibility": "archived"`)
	c.Visibility = 0
	require.NoError(t, b.k.RefreshAlbumMeta(c))
	assert.NotContains(t, b.read("A/.meta/album_meta.json"), "visibility")
	assert.Equal(t, "", visibilityName(3))
}

func TestXMPBesideEachPartNamesItsAlbumsAndIsClaimedByHash(t *testing.T) {
	b := newBench(t, Options{XMP: true})
	f := b.file(11, "x.jpg", 1, 2)
	require.NoError(t, b.k.Apply([]*state.File{f}, nil))
	xmp := b.read("A/x.jpg.xmp")
	assert.Contains(t, xmp, "by the tower")
	assert.Contains(t, xmp, "<rdf:li>A</rdf:li>", "its album is a keyword")
	assert.NotContains(t, xmp, "Favourites", "favourites is a rating, not an album")
	assert.Contains(t, xmp, `<xmp:Rating>5</xmp:Rating>`)
	assert.Equal(t, []string{"x.jpg.xmp"}, f.Entries[1].Sidecars)
	assert.Len(t, f.Entries[1].SidecarHashes["x.jpg.xmp"], 64)
	assert.Empty(t, b.k.AlbumFiles(b.albums[1]), "nothing recorded yet")
	require.NoError(t, b.st.Commit([]*state.File{f}, nil))
	require.Len(t, b.k.AlbumFiles(b.albums[1]), 1, "its keywords name the album")
	assert.Equal(t, int64(11), b.k.AlbumFiles(b.albums[1])[0].ID)

	// Rewritten by another tool: left as the user's, with a note.
	b.write("A/x.jpg.xmp", "darktable's")
	require.NoError(t, b.k.Apply([]*state.File{f}, nil))
	assert.Equal(t, "darktable's", b.read("A/x.jpg.xmp"))
	assert.Empty(t, f.Entries[1].Sidecars)
	require.Len(t, b.notes, 1)
	assert.Contains(t, b.notes[0].Err.Error(), "left as yours")

	// A file of that name quak did not record is never written over.
	g := b.file(12, "y.jpg", 1)
	b.write("A/y.jpg.xmp", "someone's")
	require.NoError(t, b.k.Apply([]*state.File{g}, nil))
	assert.Equal(t, "someone's", b.read("A/y.jpg.xmp"))
	assert.Contains(t, b.notes[1].Err.Error(), "did not write")
	// Nor a saved file's name.
	h := b.file(13, "z.jpg", 1)
	b.taken["1/z.jpg.xmp"] = true
	require.NoError(t, b.k.Apply([]*state.File{h}, nil))
	assert.Empty(t, b.read("A/z.jpg.xmp"))
	assert.Contains(t, b.notes[2].Err.Error(), "another file of the album")
}

func TestAFullDiskStopsApplyingViewsAndAnyOtherErrorIsANote(t *testing.T) {
	b := newBench(t, Options{XMP: true})
	f := b.file(11, "x.jpg", 1)
	b.disk.fail = syscall.ENOSPC
	var de *folder.DirError
	require.ErrorAs(t, b.k.Apply([]*state.File{f}, nil), &de)
	b.disk.fail = syscall.EIO
	require.NoError(t, b.k.Apply([]*state.File{f}, nil))
	require.Len(t, b.notes, 1)
	assert.Equal(t, int64(11), b.notes[0].FileID)
	assert.Contains(t, b.notes[0].Err.Error(), "metadata files")
}

func TestTakeoutSidecarsAndAlbumFile(t *testing.T) {
	b := newBench(t, Options{Sidecars: sidecars.Takeout})
	f := b.file(11, "x.jpg", 1)
	require.NoError(t, b.k.Apply([]*state.File{f}, b.albums[1]))
	assert.Contains(t, b.read("A/"+sidecars.TakeoutName("x.jpg")), "photoTakenTime")
	album := b.read("A/" + sidecars.TakeoutAlbumFile)
	assert.Contains(t, album, `"title": "A"`)
	assert.Contains(t, album, "1700000000", "dated when first written")
	assert.Equal(t, sidecarHash([]byte(album)), b.albums[1].TakeoutHash)
	assert.Equal(t, sidecars.TakeoutAlbumFile, b.k.OwnAlbumFile(b.albums[1]))
	b.write("A/"+sidecars.TakeoutAlbumFile, "the user's")
	assert.Empty(t, b.k.OwnAlbumFile(b.albums[1]))
	require.NoError(t, b.k.Apply(nil, b.albums[1]))
	assert.Equal(t, "the user's", b.read("A/"+sidecars.TakeoutAlbumFile), "left as theirs")

	xmp, takeout := b.k.OwnSidecars(b.albums[1], f.Entries[1])
	assert.Nil(t, xmp, "no XMP kept")
	assert.Equal(t, []string{sidecars.TakeoutName("x.jpg")}, takeout)
}

func TestPreparingNewViewsConvertsTheBackupOnceAndRemembersThem(t *testing.T) {
	b := newBench(t, Options{XMP: true, DateView: "YYYY", ZoneName: "UTC"})
	f := b.file(11, "x.jpg", 1)
	require.NoError(t, b.st.Commit([]*state.File{f}, b.albums[1]))
	require.NoError(t, b.k.WriteSidecar(f, b.albums[1], nil))
	n, err := b.k.Prepare(nil, false)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.NotEmpty(t, b.read("A/x.jpg.xmp"))
	assert.Equal(t, "x.jpg", b.read("By date/2020/x.jpg"))
	require.Len(t, b.disk.saved, 2, "pending, then applied")
	assert.False(t, b.disk.saved[0].Applied)
	last := b.disk.saved[1]
	assert.True(t, last.Applied)
	assert.Equal(t, zoneRules(time.UTC), last.ZoneRules)
	assert.Equal(t, "UTC", last.Zone)

	n, err = b.k.Prepare(&last, false)
	require.NoError(t, err)
	assert.Zero(t, n, "the same views: nothing converted")
	assert.Len(t, b.disk.saved, 2)
	renamed := last
	renamed.Zone = "Etc/UTC"
	_, err = b.k.Prepare(&renamed, false)
	require.NoError(t, err)
	assert.Len(t, b.disk.saved, 3, "the same rules under another name: only remembered")
	n, err = b.k.Prepare(&last, true)
	require.NoError(t, err)
	assert.Zero(t, n, "--metadata-only goes over every file; none differed")
	assert.Len(t, b.disk.saved, 5)
}

func TestTakingTheViewsDownRemovesQuaksFilesOnly(t *testing.T) {
	b := newBench(t, Options{XMP: true, DateView: "YYYY"})
	f := b.file(11, "x.jpg", 1)
	require.NoError(t, b.st.Commit([]*state.File{f}, b.albums[1]))
	_, err := b.k.Prepare(nil, false)
	require.NoError(t, err)
	b.write("A/mine.xmp", "the user's")
	k := NewKeeper(Config{Dir: b.dir, Options: Options{Zone: time.UTC}, Store: b.st, Disk: b.disk,
		Albums: func() map[int64]*state.Collection { return b.albums }, PartsExist: b.k.c.PartsExist, Taken: b.k.c.Taken,
		Record: b.k.c.Record, DiskError: b.k.c.DiskError, Tell: b.k.c.Tell, Now: b.k.c.Now})
	prev := b.disk.saved[len(b.disk.saved)-1]
	n, err := k.Prepare(&prev, false)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	assert.Empty(t, b.read("A/x.jpg.xmp"))
	assert.NoDirExists(t, filepath.Join(b.dir, DateViewDir))
	assert.Equal(t, "the user's", b.read("A/mine.xmp"))
}

func TestTheDateViewFollowsDateTitleAndContent(t *testing.T) {
	b := newBench(t, Options{DateView: "YYYY/MM"})
	f := b.file(11, "x.jpg", 1)
	require.NoError(t, b.k.Apply([]*state.File{f}, nil))
	view := filepath.Join(b.dir, "By date/2020/09/x.jpg")
	assert.FileExists(t, view)
	assert.Equal(t, &state.View{Folder: filepath.Join("2020", "09"), Parts: []string{"x.jpg"}, Title: "x.jpg", Header: "h"}, f.View)

	f.Meta.CreationTime = 1_000_000_000_000_000
	f.Meta.Title = "renamed.jpg"
	require.NoError(t, b.k.Apply([]*state.File{f}, nil))
	assert.NoFileExists(t, view)
	assert.NoDirExists(t, filepath.Join(b.dir, "By date/2020"), "an emptied date folder goes")
	assert.FileExists(t, filepath.Join(b.dir, "By date/2001/09/renamed.jpg"))

	delete(f.Entries, 1) // pruned: no album copy left
	require.NoError(t, b.k.Apply([]*state.File{f}, nil))
	assert.Nil(t, f.View)
	assert.NoDirExists(t, filepath.Join(b.dir, DateViewDir))
}

func TestTheDateViewsFolderIsKeptFreeAndNeverALink(t *testing.T) {
	b := newBench(t, Options{DateView: "YYYY"})
	b.albums[3] = &state.Collection{ID: 3, Name: DateViewDir, Folder: DateViewDir, Type: "album"}
	b.write(DateViewDir+"/a.jpg", "an old album's")
	n, err := b.k.Prepare(nil, false)
	require.NoError(t, err)
	assert.Zero(t, n)
	assert.Equal(t, DateViewDir+"_1", b.albums[3].Folder, "the album moves out of the way")
	assert.Equal(t, "an old album's", b.read(DateViewDir+"_1/a.jpg"))
	require.Len(t, b.notes, 1)
	assert.True(t, b.notes[0].Moved)

	other := newBench(t, Options{DateView: "YYYY"})
	other.write(DateViewDir+"/theirs.jpg", "x")
	_, err = other.k.Prepare(nil, false)
	var de *folder.DirError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, "DIR", de.Dir)

	linked := newBench(t, Options{DateView: "YYYY"})
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(linked.dir, DateViewDir)))
	require.ErrorAs(t, linked.k.Check(), &de)
	assert.Equal(t, folder.DirLink, de.Kind)
	require.NoError(t, newBench(t, Options{}).k.Check())
}

func TestSidecarsComeBackFromTheTrashWhereTheOptionsKeepThem(t *testing.T) {
	b := newBench(t, Options{XMP: true})
	b.write("A/x.jpg", "back from the trash")
	b.write(".quak/trash/d/A/x.jpg.xmp", "quak's xmp")
	b.write(".quak/trash/d/A/x.jpg.supplemental-metadata.json", "takeout's")
	tc := state.TrashCopy{XMP: []string{".quak/trash/d/A/x.jpg.xmp"}, Takeout: []string{".quak/trash/d/A/x.jpg.supplemental-metadata.json"}}
	own, hashes := b.k.SidecarsFromTrash(b.albums[1], filepath.Join(b.dir, "A"), []string{"x.jpg"}, tc)
	assert.Equal(t, []string{"x.jpg.xmp"}, own)
	assert.Equal(t, map[string]string{"x.jpg.xmp": sidecarHash([]byte("quak's xmp"))}, hashes)
	assert.Equal(t, "quak's xmp", b.read("A/x.jpg.xmp"))
	assert.Empty(t, b.read(".quak/trash/d/A/x.jpg.supplemental-metadata.json"), "a kind not kept goes with its file")
}

func TestDroppingAPartsSidecarsSparesTheUsers(t *testing.T) {
	b := newBench(t, Options{XMP: true})
	b.write("A/x.jpg.xmp", "quak's")
	b.write("A/y.jpg.xmp", "edited")
	own := b.k.DropPartSidecars(filepath.Join(b.dir, "A"), "x.jpg", []string{"x.jpg.xmp", "y.jpg.xmp"}, nil)
	assert.Equal(t, []string{"y.jpg.xmp"}, own)
	assert.Empty(t, b.read("A/x.jpg.xmp"))
	own = b.k.DropPartSidecars(filepath.Join(b.dir, "A"), "y.jpg", own, map[string]string{"y.jpg.xmp": sidecarHash([]byte("quak's"))})
	assert.Empty(t, own)
	assert.Equal(t, "edited", b.read("A/y.jpg.xmp"), "rewritten by another tool: the user's")
}

func TestZoneRulesTellZonesByTheirRules(t *testing.T) {
	est := time.FixedZone("EST", -5*3600)
	assert.Equal(t, zoneRules(est), zoneRules(time.FixedZone("also EST", -5*3600)))
	assert.NotEqual(t, zoneRules(est), zoneRules(time.UTC))
	assert.Len(t, zoneRules(est), 16)
	// Backups record these: a fingerprint that changed between versions
	// would make every date view look converted to another zone.
	assert.Equal(t, "bd184a524c580435", zoneRules(time.UTC))
	assert.Equal(t, "902feeec5dbf8302", zoneRules(est))
	names := append([]string{}, withName(withName(nil, "a"), "a")...)
	sort.Strings(names)
	assert.Equal(t, []string{"a"}, names)
	assert.Nil(t, withoutName([]string{"a"}, "a"))
}
