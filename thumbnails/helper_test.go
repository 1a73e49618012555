package thumbnails

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/filter"
)

// photo is a real image of w×h with a gradient and a little texture, so it
// compresses like a photo rather than like a flat colour.
func photo(w, h int, seed byte) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := byte((x*7 + y*13 + int(seed)*31) % 23)
			img.Set(x, y, color.RGBA{byte(x*255/w) + n, byte(y*255/h) + seed, byte((x+y)/4) ^ n, 255})
		}
	}
	return img
}

func jpegOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}))
	return b.Bytes()
}

func gifOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, gif.Encode(&b, img, nil))
	return b.Bytes()
}

func pngOf(t *testing.T, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// roomy is a recorded thumbnail size that a 720 px thumbnail fits easily.
const roomy = 200 << 10

type hfix struct {
	s      *enteapitest.Server
	u      *enteapitest.User
	album  *enteapitest.Album
	sleeps []time.Duration
	events []Event
	mu     sync.Mutex
}

func newFix(t *testing.T) *hfix {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{PageSize: 3})
	t.Cleanup(s.Close)
	u := s.AddUser("a@example.org", "pw", enteapitest.UserOptions{})
	return &hfix{s: s, u: u, album: u.AddAlbum("Photos")}
}

func (fx *hfix) options(t *testing.T) Options {
	t.Helper()
	// Workers sleep concurrently: record under the fixture's lock.
	p := fastPolicy(nil)
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		fx.mu.Lock()
		fx.sleeps = append(fx.sleeps, d)
		fx.mu.Unlock()
		return ctx.Err()
	}
	return Options{
		Client:  fx.s.Client(nil).WithToken(fx.u.Token()),
		Keys:    catalog.Keys{UserID: fx.u.ID, MasterKey: fx.u.MasterKey, PublicKey: fx.u.PublicKey, SecretKey: fx.u.SecretKey},
		Policy:  p,
		TempDir: t.TempDir(),
		Tools:   noTools(),
		Events: func(e Event) {
			fx.mu.Lock()
			fx.events = append(fx.events, e)
			fx.mu.Unlock()
		},
	}
}

func (fx *hfix) run(t *testing.T, o Options) *Summary {
	t.Helper()
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	return sum
}

func (fx *hfix) event(t *testing.T, fileID int64) Event {
	t.Helper()
	for _, e := range fx.events {
		if e.FileID == fileID {
			return e
		}
	}
	t.Fatalf("no event for file %d", fileID)
	return Event{}
}

// noTools has no external program at all.
func noTools() Tools {
	return Tools{
		LookPath: func(name string) (string, error) { return "", fmt.Errorf("%s: not found", name) },
		Run: func(context.Context, string, ...string) ([]byte, error) {
			return nil, fmt.Errorf("no programs in tests")
		},
	}
}

// newThumbnail decrypts the thumbnail the server now serves for f.
func newThumbnail(t *testing.T, f *enteapitest.File) []byte {
	t.Helper()
	enc, ok := f.Thumbnail()
	require.True(t, ok, "file %d has no thumbnail", f.ID)
	plain, err := secretstream.OpenBlob(f.Key(), f.ThumbnailHeader(), enc)
	require.NoError(t, err)
	return plain
}

func TestEveryClassIsRecognised(t *testing.T) {
	fx := newFix(t)
	orig := jpegOf(t, photo(400, 300, 1))
	ok := fx.album.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Data: orig})
	lost := fx.album.AddFile(enteapitest.FileSpec{Title: "lost.jpg", Data: orig, LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	corrupt := fx.album.AddFile(enteapitest.FileSpec{Title: "corrupt.jpg", Data: orig, CorruptThumbnail: true, Thumbnail: make([]byte, roomy)})
	notImage := fx.album.AddFile(enteapitest.FileSpec{Title: "text.jpg", Data: orig,
		Thumbnail: bytes.Repeat([]byte("plain text, not a JPEG "), roomy/23)})
	noRecord := fx.album.AddFile(enteapitest.FileSpec{Title: "norow.jpg", Data: orig, NoThumbnail: true})
	static := fx.album.AddFile(enteapitest.FileSpec{Title: "static.jpg", Data: orig, StaticThumbnail: true})
	noThumb := fx.album.AddFile(enteapitest.FileSpec{Title: "nothumb.jpg", Data: orig, NoThumb: true})
	// Another account's files in an album shared with us: counted once each,
	// even in two albums, and never checked.
	sam := fx.s.AddUser("sam@example.org", "pw2", enteapitest.UserOptions{})
	garden := sam.AddAlbum("Garden")
	rose := garden.AddFile(enteapitest.FileSpec{Title: "rose.jpg", Data: orig, LostThumbnail: true})
	garden.AddFile(enteapitest.FileSpec{Title: "tulip.jpg", Data: orig})
	garden.ShareWith(fx.u, "VIEWER")
	more := sam.AddAlbum("More")
	more.Add(rose)
	more.ShareWith(fx.u, "COLLABORATOR")

	o := fx.options(t)
	o.DryRun = true
	sum := fx.run(t, o)

	want := map[int64]Class{ok.ID: OK, lost.ID: Lost, corrupt.ID: Corrupt, notImage.ID: Corrupt,
		noRecord.ID: NoRecord, static.ID: Placeholder, noThumb.ID: Placeholder}
	for id, class := range want {
		assert.Equal(t, class, fx.event(t, id).Class, "file %d", id)
	}
	assert.Equal(t, 7, sum.Owned)
	assert.Equal(t, 2, sum.SharedIn)
	assert.Equal(t, map[Class]int{OK: 1, Lost: 1, Corrupt: 2, NoRecord: 1, Placeholder: 2}, sum.Classes)
	assert.Equal(t, Reported, fx.event(t, noRecord.ID).Action)
	assert.Equal(t, Reported, fx.event(t, static.ID).Action)
	assert.Zero(t, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", rose.ID)), "shared-in files are never checked")
	assert.Zero(t, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", static.ID)), "placeholders need no download")
	assert.Equal(t, 2, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", corrupt.ID)),
		"bytes that fail to authenticate are fetched a second time before being called corrupt")
	assert.Equal(t, 1, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", ok.ID)))
	assert.Equal(t, 1, fx.s.Requests("POST /files/info"), "asked only about the file whose listing had no size")
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"), "a dry run uploads nothing")
	assert.Zero(t, fx.s.Requests("GET /files/upload-urls"))
	assert.Equal(t, WouldRepair, fx.event(t, lost.ID).Action)
	assert.True(t, sum.Healthy(), "no-record and placeholders are reported, not failures: %v", sum.Problems)
}

// One flip in flight is not corruption: the second download reads fine.
func TestOneDamagedDownloadIsNotCorrupt(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	fx.s.Inject(fmt.Sprintf("GET /store/%d/thumb-%d", fx.u.ID, f.ID), enteapitest.FlipAt(40))
	fx.run(t, fx.options(t))
	assert.Equal(t, OK, fx.event(t, f.ID).Class)
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
}

func TestRepairsLostAndCorruptWithinTheRules(t *testing.T) {
	fx := newFix(t)
	lost := fx.album.AddFile(enteapitest.FileSpec{Title: "wide.jpg", Data: jpegOf(t, photo(1000, 600, 2)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	corrupt := fx.album.AddFile(enteapitest.FileSpec{Title: "tall.png", Data: pngOf(t, photo(300, 900, 3)),
		CorruptThumbnail: true, Thumbnail: make([]byte, roomy)})
	small := fx.album.AddFile(enteapitest.FileSpec{Title: "small.gif", Data: gifOf(t, photo(200, 100, 4)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	sum := fx.run(t, fx.options(t))

	for _, c := range []struct {
		f    *enteapitest.File
		w, h int
	}{{lost, 720, 432}, {corrupt, 240, 720}, {small, 200, 100}} {
		e := fx.event(t, c.f.ID)
		require.Equal(t, Repaired, e.Action, "file %d: %v", c.f.ID, e.Err)
		plain := newThumbnail(t, c.f)
		cfg, format, err := image.DecodeConfig(bytes.NewReader(plain))
		require.NoError(t, err)
		assert.Equal(t, "jpeg", format)
		assert.Equal(t, [2]int{c.w, c.h}, [2]int{cfg.Width, cfg.Height}, "longer side 720 px at most, never enlarged")
		enc, _ := c.f.Thumbnail()
		assert.LessOrEqual(t, len(enc), roomy+secretstream.Overhead, "the size rule")
		assert.Equal(t, int64(len(enc)), e.Size)
		assert.Equal(t, 1, fx.s.Requests(fmt.Sprintf("GET /files/download/%d", c.f.ID)), "one download of the original")
	}
	assert.Equal(t, 3, fx.s.Requests("PUT /files/thumbnail"), "exactly one commit per file")
	assert.Equal(t, 3, sum.Actions[Repaired])
	assert.True(t, sum.Healthy())
	assert.Zero(t, fx.s.Leaks())

	// A second run finds everything ok and does nothing.
	fx.events = nil
	sum = fx.run(t, fx.options(t))
	assert.Equal(t, map[Class]int{OK: 3}, sum.Classes)
	assert.Equal(t, 3, fx.s.Requests("PUT /files/thumbnail"))
}

// A 503 storm must never be read as "missing": nothing is repaired, every
// file is unknown, and the run is not healthy (exit 2).
func TestA503StormRepairsNothing(t *testing.T) {
	fx := newFix(t)
	var files []*enteapitest.File
	for i := 0; i < 4; i++ {
		f := fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Data: []byte{byte(i)}})
		fx.s.Inject(fmt.Sprintf("GET /files/preview/%d", f.ID), enteapitest.Repeat(enteapitest.Status(503), 10)...)
		files = append(files, f)
	}
	sum := fx.run(t, fx.options(t))
	assert.Equal(t, map[Class]int{Unknown: 4}, sum.Classes)
	assert.False(t, sum.Healthy())
	assert.Len(t, sum.Problems, 4)
	assert.Zero(t, fx.s.Requests("GET /files/upload-urls"))
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Zero(t, fx.s.RequestsWithPrefix("GET /files/download/"))
	for _, f := range files {
		assert.Equal(t, 4, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", f.ID)), "retried to the policy's attempts")
		assert.Error(t, fx.event(t, f.ID).Err)
	}
	assert.Len(t, fx.sleeps, 4*3, "three backoffs per file, recorded, never slept")
	assert.Zero(t, fx.s.ExactRepeats())
}

// A thumbnail cut on the way (shorter than the size on record) is the
// network's fault: retried, never called lost or corrupt.
func TestCutThumbnailIsRetriedNotRepaired(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	fx.s.Inject(fmt.Sprintf("GET /store/%d/thumb-%d", fx.u.ID, f.ID), enteapitest.CutAfter(100))
	fx.run(t, fx.options(t))
	assert.Equal(t, OK, fx.event(t, f.ID).Class)
	assert.Equal(t, 2, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", f.ID)))
}

func TestRetryAfterIsHonoured(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x")})
	fx.s.Inject(fmt.Sprintf("GET /files/preview/%d", f.ID), enteapitest.RetryAfter(429, "7"))
	fx.run(t, fx.options(t))
	assert.Equal(t, OK, fx.event(t, f.ID).Class)
	assert.Equal(t, []time.Duration{7 * time.Second}, fx.sleeps)
}

func TestTooLargeIsReportedNotUploaded(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.jpg", Data: jpegOf(t, photo(240, 180, 5)),
		LostThumbnail: true, Thumbnail: make([]byte, 300)})
	sum := fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	assert.Equal(t, Lost, e.Class)
	assert.Equal(t, TooLarge, e.Action)
	assert.ErrorIs(t, e.Err, ErrTooLarge)
	assert.Equal(t, int64(300+secretstream.Overhead), e.Budget)
	assert.Zero(t, fx.s.Requests("GET /files/upload-urls"), "know the rule before calling: nothing uploaded")
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, []int64{f.ID}, sum.Problems)
}

// The commit lands but its answer is lost: one commit, and still repaired.
func TestLostCommitAnswerEndsInOneCommit(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(300, 200, 6)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.s.Inject("PUT /files/thumbnail", enteapitest.LoseResponse())
	fx.run(t, fx.options(t))
	assert.Equal(t, Repaired, fx.event(t, f.ID).Action)
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.True(t, IsImage(newThumbnail(t, f)))
	assert.Zero(t, fx.s.ExactRepeats())
}

func TestLimitRepairsAtMostN(t *testing.T) {
	fx := newFix(t)
	for i := 0; i < 3; i++ {
		fx.album.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Data: jpegOf(t, photo(200, 150, byte(i))),
			LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	}
	o := fx.options(t)
	o.Limit = 1
	sum := fx.run(t, o)
	assert.Equal(t, 1, sum.Actions[Repaired])
	assert.Equal(t, 2, sum.Actions[Skipped])
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, 1, fx.s.RequestsWithPrefix("GET /files/download/"), "no original is fetched beyond the limit")
	assert.True(t, sum.Healthy(), "files left by --limit are not failures")
}

// A thumbnail the server records no room for (its encrypted size no more
// than the encryption's own overhead) is too large at once and does not
// use up --limit: the next file is still repaired.
func TestNoRoomDoesNotUseUpTheLimit(t *testing.T) {
	fx := newFix(t)
	none := fx.album.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: jpegOf(t, photo(200, 150, 1)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	none.RecordThumbnailSize(secretstream.Overhead)
	next := fx.album.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: jpegOf(t, photo(200, 150, 2)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	o := fx.options(t)
	o.Limit, o.Concurrency = 1, 1
	fx.run(t, o)
	e := fx.event(t, none.ID)
	assert.Equal(t, TooLarge, e.Action)
	assert.ErrorIs(t, e.Err, ErrTooLarge)
	assert.Equal(t, Repaired, fx.event(t, next.ID).Action)
	assert.Equal(t, 1, fx.s.RequestsWithPrefix("GET /files/download/"), "no original fetched for a file with no room")
}

// An original of one pixel is still a picture: its lost thumbnail is
// made from it.
func TestOnePixelOriginalIsRepaired(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "dot.png", Data: pngOf(t, flat(1, 1, color.White)),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	got, err := jpeg.DecodeConfig(bytes.NewReader(newThumbnail(t, f)))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1, 1}, [2]int{got.Width, got.Height})
}

func TestAlbumsFilter(t *testing.T) {
	fx := newFix(t)
	in := fx.album.AddFile(enteapitest.FileSpec{Title: "in.jpg", Data: []byte("x")})
	out := fx.u.AddAlbum("Other").AddFile(enteapitest.FileSpec{Title: "out.jpg", Data: []byte("y")})
	o := fx.options(t)
	o.Albums = filter.Albums{Include: []string{"phot*"}}
	sum := fx.run(t, o)
	assert.Equal(t, 1, sum.Owned)
	assert.Equal(t, 1, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", in.ID)))
	assert.Zero(t, fx.s.Requests(fmt.Sprintf("GET /files/preview/%d", out.ID)))
}

func TestUnsupportedOriginal(t *testing.T) {
	fx := newFix(t)
	heic := append([]byte("\x00\x00\x00\x18ftypheic"), make([]byte, 64)...)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.heic", Data: heic, LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	video := fx.album.AddFile(enteapitest.FileSpec{Title: "x.mp4", FileType: 1, Data: []byte("not really a video"),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	sum := fx.run(t, fx.options(t))
	for _, id := range []int64{f.ID, video.ID} {
		e := fx.event(t, id)
		assert.Equal(t, Unsupported, e.Action)
		assert.ErrorIs(t, e.Err, ErrUnsupported)
	}
	assert.Contains(t, fx.event(t, video.ID).Err.Error(), "ffmpeg")
	assert.Contains(t, fx.event(t, f.ID).Err.Error(), "heif")
	assert.False(t, sum.Healthy())
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
}

// A video's frame comes from ffmpeg at 1 s, else at 0 s.
func TestVideoFrameThroughFfmpeg(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Data: []byte("short video"),
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	frame := pngOf(t, photo(800, 450, 9))
	var calls [][]string
	o := fx.options(t)
	o.Tools = Tools{
		LookPath: func(name string) (string, error) {
			if name == "ffmpeg" {
				return "/opt/bin/ffmpeg", nil
			}
			return "", fmt.Errorf("no %s", name)
		},
		Run: func(_ context.Context, path string, args ...string) ([]byte, error) {
			calls = append(calls, append([]string{path}, args...))
			if len(calls) == 1 {
				return []byte("Output file is empty, nothing was encoded\n"), fmt.Errorf("exit status 1")
			}
			return nil, os.WriteFile(args[len(args)-1], frame, 0o600)
		},
	}
	fx.run(t, o)
	e := fx.event(t, f.ID)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	require.Len(t, calls, 2)
	assert.Equal(t, "/opt/bin/ffmpeg", calls[0][0])
	assert.Contains(t, calls[0], "00:00:01")
	assert.Contains(t, calls[1], "00:00:00")
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(newThumbnail(t, f)))
	require.NoError(t, err)
	assert.Equal(t, [2]int{720, 405}, [2]int{cfg.Width, cfg.Height})
}

func TestLivePhotoUsesItsImage(t *testing.T) {
	fx := newFix(t)
	zip := enteapitest.LivePhoto("jpg", jpegOf(t, photo(640, 480, 7)), "mov", []byte("moving"))
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "live.jpg", FileType: 2, Data: zip,
		LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	require.Equal(t, Repaired, e.Action, "%v", e.Err)
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(newThumbnail(t, f)))
	require.NoError(t, err)
	assert.Equal(t, 640, cfg.Width)
}

// An original that does not match its hash is never drawn from.
func TestOriginalWithWrongHashIsNotUsed(t *testing.T) {
	fx := newFix(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: jpegOf(t, photo(200, 100, 1)),
		Hash: "AAAA", LostThumbnail: true, Thumbnail: make([]byte, roomy)})
	fx.run(t, fx.options(t))
	e := fx.event(t, f.ID)
	assert.Equal(t, Failed, e.Action)
	assert.ErrorContains(t, e.Err, "hash")
	assert.Zero(t, fx.s.Requests("PUT /files/thumbnail"))
}

// --from uses the backup's verified copy and downloads nothing; a copy
// changed on disk is not trusted and the original is downloaded instead.
func TestFromABackupFolder(t *testing.T) {
	fx := newFix(t)
	a := fx.album.AddFile(enteapitest.FileSpec{Title: "a.jpg", Data: jpegOf(t, photo(500, 400, 1)), Thumbnail: make([]byte, roomy)})
	b := fx.album.AddFile(enteapitest.FileSpec{Title: "b.jpg", Data: jpegOf(t, photo(500, 400, 2)), Thumbnail: make([]byte, roomy)})
	dir := t.TempDir()
	o := fx.options(t)
	_, err := backup.Run(context.Background(), backup.Options{Dir: dir, Source: backup.Source{Client: o.Client, Keys: o.Keys}, Transfer: backup.Transfer{Policy: o.Policy}})
	require.NoError(t, err)
	a.LoseThumbnail()
	b.LoseThumbnail()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Photos", "b.jpg"), jpegOf(t, photo(500, 400, 3)), 0o644))
	aRoute, bRoute := fmt.Sprintf("GET /files/download/%d", a.ID), fmt.Sprintf("GET /files/download/%d", b.ID)
	aBefore, bBefore := fx.s.Requests(aRoute), fx.s.Requests(bRoute)

	o.FromDir = dir
	fx.run(t, o)
	assert.Equal(t, Repaired, fx.event(t, a.ID).Action)
	assert.Equal(t, Repaired, fx.event(t, b.ID).Action)
	assert.Equal(t, aBefore, fx.s.Requests(aRoute), "a's verified copy was used, not downloaded")
	assert.Equal(t, bBefore+1, fx.s.Requests(bRoute), "b, changed on disk, was downloaded")
}

func TestFromANonBackupFolder(t *testing.T) {
	fx := newFix(t)
	o := fx.options(t)
	o.FromDir = t.TempDir()
	_, err := Run(context.Background(), o)
	require.ErrorContains(t, err, "not a quak backup folder")
}

func TestRejectedSessionStopsTheRun(t *testing.T) {
	fx := newFix(t)
	fx.album.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x"), NoInfo: true})
	fx.s.Inject("POST /files/info", enteapitest.StatusBody(401, `{"error":"invalid token"}`))
	_, err := Run(context.Background(), fx.options(t))
	require.Error(t, err)
	assert.Zero(t, fx.s.RequestsWithPrefix("GET /files/preview/"))
}
