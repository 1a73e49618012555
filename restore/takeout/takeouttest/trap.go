package takeouttest

import "time"

// f is a file of a Takeout.
func f(name string, data []byte) File { return File{Name: name, Data: data} }

// Times of the trap Takeout's photos (seconds).
var (
	T2019 = time.Date(2019, 7, 4, 10, 0, 0, 0, time.UTC).Unix()
	T2020 = time.Date(2020, 2, 1, 12, 0, 0, 0, time.UTC).Unix()
	T2021 = time.Date(2021, 3, 3, 9, 30, 0, 0, time.UTC).Unix()
	T2022 = time.Date(2022, 8, 15, 18, 45, 0, 0, time.UTC).Unix()
)

// Long50 is a name Google cuts in its JSON's name.
var Long50 = "IMG_20210303_093000_a_very_long_name_for_a_photo.jpg"

// Trap is a Takeout with every trap quak knows of: a photo in a year
// folder and three albums (their metadata JSON named in three languages),
// numbered names, JSON in the newer supplemental-metadata form and cut
// short, edited copies (English and German), a live photo, favourites, an
// archived, a trashed and a partner's photo, photos with no JSON dated
// from Exif, a movie's mvhd and a name, a caption and a place, Google's
// non-photo files, a JSON that is not Google's, an empty and an untitled
// album, and a JSON whose photo is missing.
func Trap() []File {
	shared := JPEG(1)
	return []File{
		f(GP+"Photos from 2019/IMG_0001.jpg", shared),
		f(GP+"Photos from 2019/IMG_0001.jpg.json", PhotoJSON("IMG_0001.jpg", T2019, nil)),
		f(GP+"Trip to Lisbon/IMG_0001.jpg", shared),
		f(GP+"Trip to Lisbon/IMG_0001.jpg.supplemental-metadata.json", PhotoJSON("IMG_0001.jpg", T2019, nil)),
		f(GP+"Trip to Lisbon/metadata.json", AlbumJSON("Trip to Lisbon")),
		f(GP+"Famille/IMG_0001.jpg", shared),
		f(GP+"Famille/IMG_0001.jpg.json", PhotoJSON("IMG_0001.jpg", T2019, nil)),
		f(GP+"Famille/métadonnées.json", AlbumJSON("Famille")),
		f(GP+"Beste Bilder/IMG_0001(1).jpg", shared),
		f(GP+"Beste Bilder/IMG_0001.jpg(1).json", PhotoJSON("IMG_0001.jpg", T2019, map[string]any{"favorited": true})),
		f(GP+"Beste Bilder/Metadaten.json", AlbumJSON("Beste Bilder")),

		f(GP+"Photos from 2020/IMG_0002.jpg", JPEG(2)),
		f(GP+"Photos from 2020/IMG_0002.jpg.json", PhotoJSON("IMG_0002.jpg", T2020, nil)),
		f(GP+"Photos from 2020/IMG_0002(1).jpg", JPEG(3)),
		f(GP+"Photos from 2020/IMG_0002.jpg(1).json", PhotoJSON("IMG_0002.jpg", T2020+60, nil)),
		f(GP+"Photos from 2020/a (2).jpg", JPEG(4)),
		f(GP+"Photos from 2020/a (2).jpg.supplemental-metadata.json", PhotoJSON("a (2).jpg", T2020+120, nil)),

		f(GP+"Photos from 2021/"+Long50, JPEG(5)),
		f(GP+"Photos from 2021/"+Long50[:46]+".json", PhotoJSON(Long50, T2021, nil)),
		f(GP+"Photos from 2021/Screenshot_20210303_093000_Camera.jpg", JPEG(6)),
		f(GP+"Photos from 2021/Screenshot_20210303_093000_Camera.jpg.supple.json", PhotoJSON("Screenshot_20210303_093000_Camera.jpg", T2021+60, nil)),
		f(GP+"Photos from 2021/IMG_0003.jpg", JPEG(7)),
		f(GP+"Photos from 2021/IMG_0003.jpg.json", PhotoJSON("IMG_0003.jpg", T2021+120, map[string]any{
			"description": "Sunset at the beach", "geoData": Place(38.7223, -9.1393)})),
		f(GP+"Photos from 2021/IMG_0003-edited.jpg", JPEG(8)),
		f(GP+"Photos from 2021/IMG_0004.jpg", JPEG(9)),
		f(GP+"Photos from 2021/IMG_0004.jpg.supplemental-metadata.json", PhotoJSON("IMG_0004.jpg", T2021+180, map[string]any{
			"geoDataExif": Place(48.8566, 2.3522)})),
		f(GP+"Photos from 2021/IMG_0004-bearbeitet.jpg", JPEG(10)),

		f(GP+"Photos from 2022/IMG_0005.HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic fake heic")),
		f(GP+"Photos from 2022/IMG_0005.HEIC.json", PhotoJSON("IMG_0005.HEIC", T2022, nil)),
		f(GP+"Photos from 2022/IMG_0005.MOV", Movie(time.Unix(T2022+1, 0), 3000, false, 5)),
		f(GP+"Photos from 2022/IMG_0006.jpg", JPEG(11)),
		f(GP+"Photos from 2022/IMG_0006.jpg.json", PhotoJSON("IMG_0006.jpg", T2022+60, map[string]any{"favorited": true})),
		f(GP+"Photos from 2022/IMG_0009.jpg", JPEG(12)),
		f(GP+"Photos from 2022/IMG_0009.jpg.json", PhotoJSON("IMG_0009.jpg", T2022+120, map[string]any{
			"googlePhotosOrigin": map[string]any{"fromPartnerSharing": map[string]any{}}})),
		f(GP+"Archive/IMG_0007.jpg", JPEG(13)),
		f(GP+"Archive/IMG_0007.jpg.json", PhotoJSON("IMG_0007.jpg", T2022+180, map[string]any{"archived": true})),
		f(GP+"Trash/IMG_0008.jpg", JPEG(14)),
		f(GP+"Trash/IMG_0008.jpg.json", PhotoJSON("IMG_0008.jpg", T2022+240, map[string]any{"trashed": true})),

		f(GP+"Photos from 2023/IMG-20230115-WA0001.jpg", JPEG(15)),
		f(GP+"Photos from 2023/exif.jpg", ExifJPEG(16, "2023:05:06 07:08:09", "+02:00")),
		f(GP+"Photos from 2023/clip.mp4", Movie(time.Date(2023, 9, 10, 11, 12, 13, 0, time.UTC), 5000, true, 7)),
		f(GP+"Photos from 2023/random.json", []byte(`{"foo": 1}`)),

		f(GP+"Empty album/metadata.json", AlbumJSON("Empty album")),
		f(GP+"Untitled(1)/metadata.json", AlbumJSON("")),
		f(GP+"Untitled(1)/IMG_0011.jpg", JPEG(17)),
		f(GP+"Untitled(1)/IMG_0011.jpg.json", PhotoJSON("IMG_0011.jpg", T2022+300, nil)),
		f(GP+"Photos from 2019/missing.jpg.json", PhotoJSON("missing.jpg", T2019, nil)),

		f(GP+"print-subscriptions.json", []byte(`{}`)),
		f(GP+"shared_album_comments.json", []byte(`[]`)),
		f(GP+"user-generated-memory-titles.json", []byte(`{"title": "x"}`)),
		f("Takeout/archive_browser.html", []byte("<html></html>")),
	}
}

// Want is what the trap Takeout's import must make of an original.
type Want struct {
	Title    string
	Type     int
	Created  time.Time
	Offset   string
	Lat      float64
	Caption  string
	Archived bool
	Albums   string // album names, sorted, joined by ", "
}

// TrapWant is every original of Trap, by title: nothing trashed or
// a partner's, one IMG_0001.jpg for four copies.
func TrapWant() []Want {
	return []Want{
		{Title: "IMG_0001.jpg", Created: time.Unix(T2019, 0), Albums: "Beste Bilder, Famille, Favorites, Trip to Lisbon"},
		{Title: "IMG_0002.jpg", Created: time.Unix(T2020, 0), Albums: "Uncategorized"},
		{Title: "IMG_0002.jpg", Created: time.Unix(T2020+60, 0), Albums: "Uncategorized"},
		{Title: "a (2).jpg", Created: time.Unix(T2020+120, 0), Albums: "Uncategorized"},
		{Title: Long50, Created: time.Unix(T2021, 0), Albums: "Uncategorized"},
		{Title: "Screenshot_20210303_093000_Camera.jpg", Created: time.Unix(T2021+60, 0), Albums: "Uncategorized"},
		{Title: "IMG_0003.jpg", Created: time.Unix(T2021+120, 0), Lat: 38.7223, Caption: "Sunset at the beach", Albums: "Uncategorized"},
		{Title: "IMG_0003-edited.jpg", Created: time.Unix(T2021+120, 0), Lat: 38.7223, Caption: "Sunset at the beach", Albums: "Uncategorized"},
		{Title: "IMG_0004.jpg", Created: time.Unix(T2021+180, 0), Lat: 48.8566, Albums: "Uncategorized"},
		{Title: "IMG_0004-bearbeitet.jpg", Created: time.Unix(T2021+180, 0), Lat: 48.8566, Albums: "Uncategorized"},
		{Title: "IMG_0005.HEIC", Type: 2, Created: time.Unix(T2022, 0), Albums: "Uncategorized"},
		{Title: "IMG_0006.jpg", Created: time.Unix(T2022+60, 0), Albums: "Favorites, Uncategorized"},
		{Title: "IMG_0007.jpg", Created: time.Unix(T2022+180, 0), Archived: true, Albums: "Uncategorized"},
		{Title: "IMG-20230115-WA0001.jpg", Created: time.Date(2023, 1, 15, 0, 0, 0, 0, time.UTC), Albums: "Uncategorized"},
		{Title: "exif.jpg", Created: time.Date(2023, 5, 6, 5, 8, 9, 0, time.UTC), Offset: "+02:00", Albums: "Uncategorized"},
		{Title: "clip.mp4", Type: 1, Created: time.Date(2023, 9, 10, 11, 12, 13, 0, time.UTC), Albums: "Uncategorized"},
		{Title: "IMG_0011.jpg", Created: time.Unix(T2022+300, 0), Albums: "Untitled(1)"},
	}
}
