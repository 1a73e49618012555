package takeout

import (
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/restore"
)

// Times of the fixture's photos (seconds).
var (
	t2019 = time.Date(2019, 7, 4, 10, 0, 0, 0, time.UTC).Unix()
	t2020 = time.Date(2020, 2, 1, 12, 0, 0, 0, time.UTC).Unix()
	t2021 = time.Date(2021, 3, 3, 9, 30, 0, 0, time.UTC).Unix()
	t2022 = time.Date(2022, 8, 15, 18, 45, 0, 0, time.UTC).Unix()
)

// long50 is a name Google cuts in its JSON's name.
var long50 = "IMG_20210303_093000_a_very_long_name_for_a_photo.jpg"

// trapTakeout is a Takeout with every trap quak knows of: a photo in a year
// folder and three albums (their metadata JSON named in three languages),
// numbered names, JSON in the newer supplemental-metadata form and cut
// short, edited copies (English and German), a live photo, favourites, an
// archived, a trashed and a partner's photo, photos with no JSON dated
// from Exif, a movie's mvhd and a name, a caption and a place, Google's
// non-photo files, a JSON that is not Google's, an empty and an untitled
// album, and a JSON whose photo is missing.
func trapTakeout() []tfile {
	shared := jpeg(1)
	return []tfile{
		f(gp+"Photos from 2019/IMG_0001.jpg", shared),
		f(gp+"Photos from 2019/IMG_0001.jpg.json", photoJSON("IMG_0001.jpg", t2019, nil)),
		f(gp+"Trip to Lisbon/IMG_0001.jpg", shared),
		f(gp+"Trip to Lisbon/IMG_0001.jpg.supplemental-metadata.json", photoJSON("IMG_0001.jpg", t2019, nil)),
		f(gp+"Trip to Lisbon/metadata.json", albumJSON("Trip to Lisbon")),
		f(gp+"Famille/IMG_0001.jpg", shared),
		f(gp+"Famille/IMG_0001.jpg.json", photoJSON("IMG_0001.jpg", t2019, nil)),
		f(gp+"Famille/métadonnées.json", albumJSON("Famille")),
		f(gp+"Beste Bilder/IMG_0001(1).jpg", shared),
		f(gp+"Beste Bilder/IMG_0001.jpg(1).json", photoJSON("IMG_0001.jpg", t2019, map[string]any{"favorited": true})),
		f(gp+"Beste Bilder/Metadaten.json", albumJSON("Beste Bilder")),

		f(gp+"Photos from 2020/IMG_0002.jpg", jpeg(2)),
		f(gp+"Photos from 2020/IMG_0002.jpg.json", photoJSON("IMG_0002.jpg", t2020, nil)),
		f(gp+"Photos from 2020/IMG_0002(1).jpg", jpeg(3)),
		f(gp+"Photos from 2020/IMG_0002.jpg(1).json", photoJSON("IMG_0002.jpg", t2020+60, nil)),
		f(gp+"Photos from 2020/a (2).jpg", jpeg(4)),
		f(gp+"Photos from 2020/a (2).jpg.supplemental-metadata.json", photoJSON("a (2).jpg", t2020+120, nil)),

		f(gp+"Photos from 2021/"+long50, jpeg(5)),
		f(gp+"Photos from 2021/"+long50[:46]+".json", photoJSON(long50, t2021, nil)),
		f(gp+"Photos from 2021/Screenshot_20210303_093000_Camera.jpg", jpeg(6)),
		f(gp+"Photos from 2021/Screenshot_20210303_093000_Camera.jpg.supple.json", photoJSON("Screenshot_20210303_093000_Camera.jpg", t2021+60, nil)),
		f(gp+"Photos from 2021/IMG_0003.jpg", jpeg(7)),
		f(gp+"Photos from 2021/IMG_0003.jpg.json", photoJSON("IMG_0003.jpg", t2021+120, map[string]any{
			"description": "Sunset at the beach", "geoData": place(38.7223, -9.1393)})),
		f(gp+"Photos from 2021/IMG_0003-edited.jpg", jpeg(8)),
		f(gp+"Photos from 2021/IMG_0004.jpg", jpeg(9)),
		f(gp+"Photos from 2021/IMG_0004.jpg.supplemental-metadata.json", photoJSON("IMG_0004.jpg", t2021+180, map[string]any{
			"geoDataExif": place(48.8566, 2.3522)})),
		f(gp+"Photos from 2021/IMG_0004-bearbeitet.jpg", jpeg(10)),

		f(gp+"Photos from 2022/IMG_0005.HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic fake heic")),
		f(gp+"Photos from 2022/IMG_0005.HEIC.json", photoJSON("IMG_0005.HEIC", t2022, nil)),
		f(gp+"Photos from 2022/IMG_0005.MOV", movie(time.Unix(t2022+1, 0), 3000, false, 5)),
		f(gp+"Photos from 2022/IMG_0006.jpg", jpeg(11)),
		f(gp+"Photos from 2022/IMG_0006.jpg.json", photoJSON("IMG_0006.jpg", t2022+60, map[string]any{"favorited": true})),
		f(gp+"Photos from 2022/IMG_0009.jpg", jpeg(12)),
		f(gp+"Photos from 2022/IMG_0009.jpg.json", photoJSON("IMG_0009.jpg", t2022+120, map[string]any{
			"googlePhotosOrigin": map[string]any{"fromPartnerSharing": map[string]any{}}})),
		f(gp+"Archive/IMG_0007.jpg", jpeg(13)),
		f(gp+"Archive/IMG_0007.jpg.json", photoJSON("IMG_0007.jpg", t2022+180, map[string]any{"archived": true})),
		f(gp+"Trash/IMG_0008.jpg", jpeg(14)),
		f(gp+"Trash/IMG_0008.jpg.json", photoJSON("IMG_0008.jpg", t2022+240, map[string]any{"trashed": true})),

		f(gp+"Photos from 2023/IMG-20230115-WA0001.jpg", jpeg(15)),
		f(gp+"Photos from 2023/exif.jpg", exifJPEG(16, "2023:05:06 07:08:09", "+02:00")),
		f(gp+"Photos from 2023/clip.mp4", movie(time.Date(2023, 9, 10, 11, 12, 13, 0, time.UTC), 5000, true, 7)),
		f(gp+"Photos from 2023/random.json", []byte(`{"foo": 1}`)),

		f(gp+"Empty album/metadata.json", albumJSON("Empty album")),
		f(gp+"Untitled(1)/metadata.json", albumJSON("")),
		f(gp+"Untitled(1)/IMG_0011.jpg", jpeg(17)),
		f(gp+"Untitled(1)/IMG_0011.jpg.json", photoJSON("IMG_0011.jpg", t2022+300, nil)),
		f(gp+"Photos from 2019/missing.jpg.json", photoJSON("missing.jpg", t2019, nil)),

		f(gp+"print-subscriptions.json", []byte(`{}`)),
		f(gp+"shared_album_comments.json", []byte(`[]`)),
		f(gp+"user-generated-memory-titles.json", []byte(`{"title": "x"}`)),
		f("Takeout/archive_browser.html", []byte("<html></html>")),
	}
}

// wantOriginal is what the trap Takeout's import must make of a photo.
type wantOriginal struct {
	title    string
	typ      int
	created  time.Time
	offset   string
	lat      float64
	caption  string
	archived bool
	albums   string // album names, sorted, joined by ", "
}

// trapWant is every original of trapTakeout, by title: nothing trashed or
// a partner's, one IMG_0001.jpg for four copies.
func trapWant() []wantOriginal {
	return []wantOriginal{
		{title: "IMG_0001.jpg", created: time.Unix(t2019, 0), albums: "Beste Bilder, Famille, Favorites, Trip to Lisbon"},
		{title: "IMG_0002.jpg", created: time.Unix(t2020, 0), albums: "Uncategorized"},
		{title: "IMG_0002.jpg", created: time.Unix(t2020+60, 0), albums: "Uncategorized"},
		{title: "a (2).jpg", created: time.Unix(t2020+120, 0), albums: "Uncategorized"},
		{title: long50, created: time.Unix(t2021, 0), albums: "Uncategorized"},
		{title: "Screenshot_20210303_093000_Camera.jpg", created: time.Unix(t2021+60, 0), albums: "Uncategorized"},
		{title: "IMG_0003.jpg", created: time.Unix(t2021+120, 0), lat: 38.7223, caption: "Sunset at the beach", albums: "Uncategorized"},
		{title: "IMG_0003-edited.jpg", created: time.Unix(t2021+120, 0), lat: 38.7223, caption: "Sunset at the beach", albums: "Uncategorized"},
		{title: "IMG_0004.jpg", created: time.Unix(t2021+180, 0), lat: 48.8566, albums: "Uncategorized"},
		{title: "IMG_0004-bearbeitet.jpg", created: time.Unix(t2021+180, 0), lat: 48.8566, albums: "Uncategorized"},
		{title: "IMG_0005.HEIC", typ: typeLive, created: time.Unix(t2022, 0), albums: "Uncategorized"},
		{title: "IMG_0006.jpg", created: time.Unix(t2022+60, 0), albums: "Favorites, Uncategorized"},
		{title: "IMG_0007.jpg", created: time.Unix(t2022+180, 0), archived: true, albums: "Uncategorized"},
		{title: "IMG-20230115-WA0001.jpg", created: time.Date(2023, 1, 15, 0, 0, 0, 0, time.UTC), albums: "Uncategorized"},
		{title: "exif.jpg", created: time.Date(2023, 5, 6, 5, 8, 9, 0, time.UTC), offset: "+02:00", albums: "Uncategorized"},
		{title: "clip.mp4", typ: typeVideo, created: time.Date(2023, 9, 10, 11, 12, 13, 0, time.UTC), albums: "Uncategorized"},
		{title: "IMG_0011.jpg", created: time.Unix(t2022+300, 0), albums: "Untitled(1)"},
	}
}

// originalView is an original as a test compares it.
type originalView struct {
	title    string
	typ      int
	created  string // RFC 3339, UTC
	offset   string
	lat      float64
	caption  string
	archived bool
	albums   string
}

func viewOf(tk *Takeout, o *restore.Original) *originalView {
	names := map[int64]string{}
	for _, a := range tk.Albums {
		names[a.ID] = a.Name
	}
	var as []string
	for _, id := range o.Albums {
		as = append(as, names[id])
	}
	sort.Strings(as)
	v := &originalView{title: o.Title, typ: o.FileType, created: time.UnixMicro(o.CreationTime).UTC().Format(time.RFC3339), offset: o.Offset,
		caption: o.Caption, archived: o.Archived, albums: strings.Join(as, ", ")}
	if o.Latitude != nil {
		v.lat = *o.Latitude
	}
	return v
}

func (w wantOriginal) view() *originalView {
	return &originalView{title: w.title, typ: w.typ, created: w.created.UTC().Format(time.RFC3339), offset: w.offset, lat: w.lat, caption: w.caption,
		archived: w.archived, albums: w.albums}
}
