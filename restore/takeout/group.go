package takeout

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quak-photos/quak/restore"
)

// item is one original of the Takeout and where its bytes are: each
// placement's entries, the best first.
type item struct {
	o      *restore.Original
	places []*placement
	// dated: its creation time is known; else the first read of its
	// first part dates it (Exif, a movie's mvhd), else its name or its
	// modification time does.
	dated bool
	taken bool // given to the import in this reading
}

// Names of the albums an import makes besides the Takeout's own.
const (
	favoritesName     = "Favorites"
	uncategorizedName = "Uncategorized"
	// hiddenReport names Ente's hidden album in the report.
	hiddenReport = "Hidden (from Google's Locked Folder)"
)

// group makes one original of each content, in the albums of every
// placement of it, described by its best placement.
func (t *Takeout) group(places []*placement) {
	byKey := map[string]*item{}
	var order []*item
	for _, pl := range places {
		it := byKey[pl.key]
		if it == nil {
			it = &item{}
			byKey[pl.key] = it
			order = append(order, it)
		}
		it.places = append(it.places, pl)
	}
	albums := map[int64]*restore.ImportAlbum{}
	reports := map[int64]*AlbumReport{}
	for _, it := range order {
		sort.SliceStable(it.places, func(i, j int) bool { return it.places[i].rank() < it.places[j].rank() })
		it.o = t.original(it)
		it.o.Albums = t.albumsOf(it, albums, reports)
		t.items[it.o] = it
		t.Originals = append(t.Originals, it.o)
		if it.o.FileType == typeLive {
			t.Report.Live++
		}
	}
	t.Report.Originals = len(t.Originals)
	ids := make([]int64, 0, len(albums))
	for id := range albums {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		t.Albums = append(t.Albums, *albums[id])
		if r := reports[id]; r != nil {
			t.Report.Albums = append(t.Report.Albums, *r)
		}
	}
	t.folderNotes(places)
}

// original describes an item from its best placement; flags (favourite,
// archived) from any.
func (t *Takeout) original(it *item) *restore.Original {
	pl := it.places[0]
	first := pl.parts[0]
	o := &restore.Original{Key: pl.key, Where: first.where(), Title: titleOf(pl), FileType: fileType(first.base)}
	if len(pl.parts) == 2 {
		o.FileType = typeLive
	}
	hashes := make([]string, 0, len(pl.parts))
	for _, e := range pl.parts {
		o.Parts = append(o.Parts, restore.Part{Name: e.base, Size: e.size})
		hashes = append(hashes, e.hash)
	}
	if !contains(hashes, "") {
		o.Hash = strings.Join(hashes, ":")
	}
	o.ModificationTime = first.mod
	if m := pl.meta; m != nil {
		o.Caption, o.Latitude, o.Longitude = m.caption, m.lat, m.long
		if m.modified != 0 {
			o.ModificationTime = m.modified
		}
		if m.hasTimestamp {
			o.CreationTime, it.dated = m.taken, true
		}
	}
	for _, p := range it.places {
		o.Archived = o.Archived || p.meta != nil && p.meta.archived
	}
	if !it.dated && first.date != nil {
		o.CreationTime, o.Offset, it.dated = first.date.micros, first.date.offset, true
	}
	if !it.dated && first.p.kind == kindTar {
		// Its bytes were read and carry no date: the name or the time.
		t.dateByName(o, first)
		it.dated = true
	}
	return o
}

// dateByName dates an original whose bytes carry no date, as Ente's
// uploader does: from a date in its name, else its modification time.
func (t *Takeout) dateByName(o *restore.Original, first *entry) {
	if d, ok := nameDate(first.base, t.o.Location, t.o.Now()); ok {
		o.CreationTime = d
		return
	}
	o.CreationTime = o.ModificationTime
}

// titleOf is the name an original gets in Ente: its JSON's title (the
// name it was uploaded to Google with, whole, where the Takeout's copy may
// be cut short or numbered) when the title has the file's extension; the
// file's own name otherwise, and always for an edited copy.
func titleOf(pl *placement) string {
	own := pl.parts[0].base
	if clean := cleanTitle(own); clean != "" {
		own = clean
	}
	if pl.meta == nil || pl.rule == RuleEdited || pl.meta.title == "" {
		return own
	}
	if !strings.EqualFold(path.Ext(pl.meta.title), path.Ext(own)) {
		return own
	}
	return pl.meta.title
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// albumsOf returns the albums an original goes into: the album of each
// folder holding it that has an album JSON, the favourites when any of its
// JSON says so, else (in year folders only) Ente's Uncategorized. A photo
// of Google's Locked Folder goes into Ente's hidden album only: in any
// other it would be shown.
func (t *Takeout) albumsOf(it *item, albums map[int64]*restore.ImportAlbum, reports map[int64]*AlbumReport) []int64 {
	var ids []int64
	add := func(a restore.ImportAlbum, r *AlbumReport) {
		if _, ok := albums[a.ID]; !ok {
			albums[a.ID] = &a
			if r != nil {
				reports[a.ID] = r
			}
		}
		if !containsID(ids, a.ID) {
			ids = append(ids, a.ID)
			if r := reports[a.ID]; r != nil {
				r.Files++
			}
		}
	}
	for _, p := range it.places {
		if p.meta != nil && p.meta.locked {
			add(restore.ImportAlbum{ID: albumID("hidden", ""), Name: restore.HiddenAlbum, Type: "album", Visibility: 2},
				&AlbumReport{Name: hiddenReport})
			return ids
		}
	}
	favorite := false
	for _, p := range it.places {
		favorite = favorite || p.meta != nil && p.meta.favorite
		if title, untitled, ok := p.f.albumTitle(); ok {
			add(restore.ImportAlbum{ID: albumID("album", title), Name: title, Type: "album"},
				&AlbumReport{Name: title, Folder: p.f.dir, Untitled: untitled})
		}
	}
	if len(ids) == 0 {
		add(restore.ImportAlbum{ID: albumID("uncategorized", ""), Name: uncategorizedName, Type: "uncategorized"}, nil)
	}
	if favorite {
		add(restore.ImportAlbum{ID: albumID("favorites", ""), Name: favoritesName, Type: "favorites"}, nil)
	}
	return ids
}

func containsID(ids []int64, id int64) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// albumID names an album of the Takeout across runs and Takeouts: by its
// type and title, so that albums of one title are one album, as Ente's own
// importer makes them.
func albumID(typ, title string) int64 {
	sum := sha256.Sum256([]byte(typ + "\x00" + title))
	return int64(binary.BigEndian.Uint64(sum[:8])>>2) + 1
}

// folderNotes names the albums whose folders hold nothing imported, and
// the folders without album metadata whose name does not say the year
// most of their dated photos were taken in (or whose photos have no one
// year): not a year's folder, so an album whose metadata JSON is in a part
// not given.
func (t *Takeout) folderNotes(places []*placement) {
	used := map[*folder]bool{}
	years := map[*folder]map[int]int{}
	for _, pl := range places {
		used[pl.f] = true
		// Google's own folders of archived and locked photos are named
		// after no year.
		if pl.meta != nil && pl.meta.hasTimestamp && !pl.meta.archived && !pl.meta.locked {
			if years[pl.f] == nil {
				years[pl.f] = map[int]int{}
			}
			years[pl.f][time.UnixMicro(pl.meta.taken).UTC().Year()]++
		}
	}
	for _, f := range t.allFolders {
		title, _, isAlbum := f.albumTitle()
		switch {
		case isAlbum && !used[f]:
			t.note(Note{Kind: NoteEmptyAlbum, Name: f.dir, Reason: fmt.Sprintf("album %q holds nothing to import; it is not made", title)})
		case !isAlbum && used[f]:
			if y := majority(years[f]); len(years[f]) > 0 && (y == 0 || !strings.Contains(path.Base(f.dir), strconv.Itoa(y))) {
				t.note(Note{Kind: NoteIncomplete, Name: f.dir,
					Reason: "no album metadata, and not named after the year of its photos: if it is an album, its metadata JSON is in a part not given, and its photos go to Uncategorized"})
			}
		}
	}
}

// majority is the year more than half of the counts fall in, or 0.
func majority(counts map[int]int) int {
	total := 0
	for _, n := range counts {
		total += n
	}
	for y, n := range counts {
		if 2*n > total {
			return y
		}
	}
	return 0
}
