package enteapitest

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
)

// Demo account credentials: the fake server's demo library belongs to them.
// DemoRestoreEmail is a second, empty account of the same password, to
// restore the demo backup into.
const (
	DemoEmail        = "demo@quak.invalid"
	DemoPassword     = "quak demo password"
	DemoRestoreEmail = "restored@quak.invalid"
)

// DemoLibrary fills s with a small library that shows what quak handles:
// albums of several file types and sizes (multi-chunk ones included), a file
// in two albums, a hidden album, an album shared by another account, a live
// photo, edited captions and names, a trashed file, and names a careless tool
// would write outside its folder. It returns the demo user.
func DemoLibrary(s *Server) *User {
	u := s.AddUser(DemoEmail, DemoPassword, UserOptions{})
	sam := s.AddUser("sam@quak.invalid", "sam's password", UserOptions{})
	s.AddUser(DemoRestoreEmail, DemoPassword, UserOptions{})

	holidays := u.AddAlbum("Holidays 2024")
	beach := holidays.AddFile(FileSpec{Title: "IMG_0001.jpg", Size: 180 << 10, Seed: 1,
		Latitude: 43.2965, Longitude: 5.3698, Caption: "First swim of the year"})
	holidays.AddFile(FileSpec{Title: "IMG_0002.jpg", Size: 4<<20 + 1, Seed: 2})
	holidays.AddFile(FileSpec{Title: "img_0002.JPG", Size: 2 << 10, Seed: 3})
	holidays.AddFile(FileSpec{Title: "IMG_0003.HEIC", Size: 0, Seed: 4, EditedName: "Sunset.heic"})
	// A real photo whose thumbnail Ente lost: a grey tile in Ente's apps,
	// for quak helper fix-missing-thumbnails.
	holidays.AddFile(FileSpec{Title: "IMG_0004.jpg", Data: SampleJPEG(1600, 1200, 4),
		LostThumbnail: true, Thumbnail: make([]byte, 60<<10)})

	family := u.AddAlbum("Family")
	family.Add(beach) // the same file in two albums: downloaded once
	family.AddFile(FileSpec{Title: "scan.png", Size: 70 << 10, Seed: 5})
	trashed := family.AddFile(FileSpec{Title: "blurry.jpg", Size: 10 << 10, Seed: 6})
	trashed.Trash()

	videos := u.AddAlbum("Videos")
	videos.AddFile(FileSpec{Title: "birthday.mp4", FileType: 1, Size: 9<<20 + 12345, Seed: 7})

	live := u.AddAlbum("Live photos")
	live.AddFile(FileSpec{Title: "IMG_0100.HEIC", FileType: 2,
		Data: LivePhoto("heic", []byte("still image bytes"), "mov", []byte("moving video bytes"))})

	hidden := u.AddAlbum("Private")
	hidden.SetVisibility(2)
	hidden.AddFile(FileSpec{Title: "receipt.pdf", FileType: 3, Size: 30 << 10, Seed: 8})

	hostile := u.AddAlbum("../../outside")
	hostile.AddFile(FileSpec{Title: "..\\con:evil?.jpg", Size: 1 << 10, Seed: 9})
	hostile.AddFile(FileSpec{Title: "/etc/passwd", Size: 1 << 10, Seed: 10})

	shared := sam.AddAlbum("Sam's garden")
	shared.AddFile(FileSpec{Title: "roses.jpg", Size: 120 << 10, Seed: 11})
	shared.ShareWith(u, "VIEWER")

	favs := u.AddCollection("Favorites", "favorites")
	favs.Add(beach)
	return u
}

// BenchLibrary gives s a user (the demo credentials) with n generated files
// of size bytes in one album, for end-to-end benchmarks. The ciphertext is
// made up front and held in memory, so the server spends no CPU serving it
// and the benchmark measures quak.
func BenchLibrary(s *Server, n int, size int64) *User {
	u := s.AddUser(DemoEmail, DemoPassword, UserOptions{})
	a := u.AddAlbum("Bench")
	for i := 0; i < n; i++ {
		a.AddFile(FileSpec{Title: fmt.Sprintf("IMG_%05d.jpg", i), Size: size, Seed: byte(i), Materialize: true})
	}
	return u
}

// SampleJPEG is a w×h photo-like JPEG (gradients with some texture), for
// libraries whose originals must decode as images.
func SampleJPEG(w, h int, seed byte) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := byte((x*7 + y*13 + int(seed)*31) % 23)
			img.Set(x, y, color.RGBA{byte(x*255/w) + n, byte(y*255/h) + seed, byte((x+y)/8) ^ n, 255})
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 85}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// DemoLink adds an album another account shares with a public link, no
// account needed to read it (quak backup --link-file), and returns the link.
func DemoLink(s *Server) *Link {
	g := s.AddUser("grandma@quak.invalid", "grandma's password", UserOptions{})
	a := g.AddAlbum("Grandma's 80th")
	a.AddFile(FileSpec{Title: "cake.jpg", Size: 150 << 10, Seed: 21, Caption: "Eighty candles"})
	a.AddFile(FileSpec{Title: "everyone.jpg", Size: 5<<20 + 7, Seed: 22})
	a.AddFile(FileSpec{Title: "speech.mp4", FileType: 1, Size: 600 << 10, Seed: 23})
	return a.ShareLink(LinkOptions{})
}
