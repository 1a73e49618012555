package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

type env struct {
	t      *testing.T
	s      *enteapitest.Server
	u      *enteapitest.User
	dir    string
	token  string
	mu     sync.Mutex
	events []Event
	views  Views // what options() asks for
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, enteapitest.Config{PageSize: 3})
}

func newEnvWith(t *testing.T, cfg enteapitest.Config) *env {
	t.Helper()
	s := enteapitest.New(cfg)
	t.Cleanup(s.Close)
	u := s.AddUser("me@example.org", "pw", enteapitest.UserOptions{})
	root := t.TempDir()
	dir := filepath.Join(root, "backup")
	require.NoError(t, os.Mkdir(dir, 0o755))
	return &env{t: t, s: s, u: u, dir: dir, token: u.Token()}
}

func (e *env) options() Options {
	p := retry.Default()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return Options{
		Dir: e.dir,
		Source: Source{Client: e.s.Client(nil).WithToken(e.token), Email: e.u.Email,
			Keys: catalog.Keys{UserID: e.u.ID, MasterKey: e.u.MasterKey, PublicKey: e.u.PublicKey, SecretKey: e.u.SecretKey}},
		// Every test of a file of more than 8 MiB runs with several
		// ranges in flight (issue 20), from its first chunk: a number
		// found from the link would depend on the machine's speed.
		Transfer: Transfer{Policy: p, Streams: download.DefaultStreams, StreamAbove: 8 << 20},
		Views:    e.views,
		Pruning:  Pruning{Now: func() time.Time { return pruneDay }}, // album dates never depend on the wall clock
		Events: func(ev Event) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.events = append(e.events, ev)
		},
	}
}

func (e *env) run() (*Summary, error) {
	e.t.Helper()
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	return Run(context.Background(), e.options())
}

func (e *env) mustRun() *Summary {
	e.t.Helper()
	sum, err := e.run()
	require.NoError(e.t, err)
	return sum
}

func (e *env) read(rel string) []byte {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, rel))
	require.NoError(e.t, err, rel)
	return b
}

// same checks a saved file's content without dumping megabytes.
func (e *env) same(rel string, want []byte) {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, rel))
	if err != nil {
		e.t.Errorf("%s: %v", rel, err)
		return
	}
	if !bytes.Equal(b, want) {
		e.t.Errorf("%s: content differs (%d bytes, want %d)", rel, len(b), len(want))
	}
}

func (e *env) downloads() int { return e.s.RequestsWithPrefix("GET /store/") }

func (e *env) kinds(k Kind) []Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Event
	for _, ev := range e.events {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// walk lists every file under the backup folder, outside .quak.
func (e *env) walk() []string {
	e.t.Helper()
	var out []string
	require.NoError(e.t, filepath.WalkDir(e.dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == folder.StateDir {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(e.dir, p)
			out = append(out, rel)
		}
		return nil
	}))
	return out
}

// noTemps checks that no temp file is left, in quak's temp area or
// anywhere else.
func (e *env) noTemps() {
	e.t.Helper()
	for _, p := range e.walk() {
		assert.NotContains(e.t, filepath.Base(p), durable.TempPrefix, "temp file left: %s", p)
	}
	left, err := os.ReadDir(folder.At(e.dir).Temp())
	if err == nil {
		assert.Empty(e.t, left, "temp files left in quak's temp area")
	}
}

// keptParts lists the partial downloads kept in quak's temp area, by their
// temp files; it fails the test on anything else there but their side
// files.
func (e *env) keptParts() []string {
	e.t.Helper()
	entries, err := os.ReadDir(folder.At(e.dir).Temp())
	require.NoError(e.t, err)
	names := map[string]bool{}
	for _, en := range entries {
		names[en.Name()] = true
	}
	var parts []string
	sides := map[string]bool{}
	for n := range names {
		for _, s := range download.SideFiles(n) {
			sides[s] = true
		}
	}
	for n := range names {
		if !sides[n] {
			parts = append(parts, n)
		}
	}
	sort.Strings(parts)
	return parts
}

func TestEveryTypeAndSizeIsSavedByteExact(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Everything")
	sizes := []int64{0, 1, 4<<20 - 1, 4 << 20, 4<<20 + 1, 2*(4<<20) + 3}
	var files []*enteapitest.File
	for i, size := range sizes {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("f%d.jpg", i), Size: size, Seed: byte(i)}))
	}
	video := a.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 5000, Seed: 9})
	other := a.AddFile(enteapitest.FileSpec{Title: "doc.pdf", FileType: 3, Size: 700, Seed: 10})
	unknown := a.AddFile(enteapitest.FileSpec{Title: "weird.bin", FileType: 42, Size: 70, Seed: 11})
	a.AddFile(enteapitest.FileSpec{Title: "IMG_7.HEIC", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("the still"), "mov", []byte("the motion"))})

	sum := e.mustRun()
	assert.Equal(t, len(sizes)+4, sum.New)
	assert.Zero(t, sum.Failed)
	for i, f := range files {
		e.same(fmt.Sprintf("Everything/f%d.jpg", i), f.Plaintext())
	}
	e.same("Everything/clip.mp4", video.Plaintext())
	e.same("Everything/doc.pdf", other.Plaintext())
	e.same("Everything/weird.bin", unknown.Plaintext())
	assert.Equal(t, []byte("the still"), e.read("Everything/IMG_7.heic"))
	assert.Equal(t, []byte("the motion"), e.read("Everything/IMG_7.mov"))

	var sc sidecarFile
	require.NoError(t, json.Unmarshal(e.read("Everything/.meta/f1.jpg.json"), &sc))
	assert.Equal(t, "f1.jpg", sc.Title)
	assert.Equal(t, files[1].ID, sc.Info.ID)
	assert.Equal(t, "ok", sc.Quak.HashCheck)
	fi, err := os.Stat(filepath.Join(e.dir, "Everything/f1.jpg"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "saved files are not private temp files")
	live, err := os.Stat(filepath.Join(e.dir, "Everything/IMG_7.mov"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), live.Mode().Perm())
	assert.Equal(t, sc.CreationTime, fi.ModTime().UTC().Format(time.RFC3339), "mtime is the creation time")
	e.noTemps()
}

func TestSecondRunDownloadsNothingAndListsOnce(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 3; i++ {
		a := e.u.AddAlbum(fmt.Sprintf("Album %d", i))
		for j := 0; j < 7; j++ {
			a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", j), Size: 100, Seed: byte(j)})
		}
	}
	first := e.mustRun()
	assert.Equal(t, 21, first.New)
	downloads := e.downloads()
	diffs := e.s.Requests("GET /collections/v2/diff")
	lists := e.s.Requests("GET /collections/v2")

	second := e.mustRun()
	assert.Zero(t, second.New)
	assert.Equal(t, 21, second.Unchanged)
	assert.Equal(t, downloads, e.downloads(), "no download")
	assert.Equal(t, diffs, e.s.Requests("GET /collections/v2/diff"), "no diff call for unchanged albums")
	assert.Equal(t, lists+1, e.s.Requests("GET /collections/v2"), "one listing call")
}

func TestFileInTwoAlbumsIsDownloadedOnce(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	f := a.AddFile(enteapitest.FileSpec{Title: "shared.jpg", Size: 5000, Seed: 1})
	b.Add(f)
	sum := e.mustRun()
	assert.Equal(t, 1, sum.New)
	assert.Equal(t, 1, sum.Linked)
	assert.Equal(t, 1, e.downloads())
	fa, err := os.Stat(filepath.Join(e.dir, "A/shared.jpg"))
	require.NoError(t, err)
	fb, err := os.Stat(filepath.Join(e.dir, "B/shared.jpg"))
	require.NoError(t, err)
	assert.True(t, os.SameFile(fa, fb), "a hard link, not a copy")
	e.same("B/shared.jpg", f.Plaintext())

	// Added to a third album later: linked, still one download.
	c := e.u.AddAlbum("C")
	c.Add(f)
	sum = e.mustRun()
	assert.Equal(t, 1, sum.Linked)
	assert.Equal(t, 1, e.downloads())
	e.same("C/shared.jpg", f.Plaintext())
}

func TestHostileNamesStayInside(t *testing.T) {
	e := newEnv(t)
	for _, name := range []string{"../../escape", "..", "/etc", `..\..\win`, folder.StateDir, "con"} {
		a := e.u.AddAlbum(name)
		for _, title := range []string{"../../../../tmp/evil.jpg", "..", "/etc/passwd", `..\x.jpg`, ".meta", "a\x00b.jpg", "nul.txt"} {
			a.AddFile(enteapitest.FileSpec{Title: title, Size: 10, Seed: 1})
		}
	}
	sum := e.mustRun()
	assert.Equal(t, 42, sum.New)
	assert.Zero(t, sum.Failed)
	parent := filepath.Dir(e.dir)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing written beside the backup folder")
	files := e.walk()
	for _, p := range files {
		assert.False(t, strings.HasPrefix(p, ".."+string(filepath.Separator)), p)
	}
	st, err := os.Stat(folder.At(e.dir).StateFile())
	require.NoError(t, err, "the state folder was not clobbered")
	assert.True(t, st.Mode().IsRegular())
}

func TestCollidingNamesGetStableSuffixes(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "IMG.jpg", Size: 1, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "img.JPG", Size: 2, Seed: 2})
	e.mustRun()
	got := e.walk()
	assert.Contains(t, got, "Trip/IMG.jpg")
	assert.Contains(t, got, "Trip/img_1.JPG")
	a.AddFile(enteapitest.FileSpec{Title: "IMG.jpg", Size: 3, Seed: 3})
	e.mustRun()
	got = e.walk()
	assert.Contains(t, got, "Trip/IMG_2.jpg")
	assert.Contains(t, got, "Trip/IMG.jpg", "earlier names are kept")
}

func TestEditsApplyWithoutDownloading(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Trip")
	f := a.AddFile(enteapitest.FileSpec{Title: "IMG.jpg", Size: 100, Seed: 1, CreationTime: 1_600_000_000_000_000})
	e.mustRun()
	downloads := e.downloads()

	f.Edit(func(s *enteapitest.FileSpec) { s.Caption = "at the lake"; s.EditedTime = 1_500_000_000_000_000 })
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Updated)
	assert.Zero(t, sum.New)
	assert.Equal(t, downloads, e.downloads())
	var sc sidecarFile
	require.NoError(t, json.Unmarshal(e.read("Trip/.meta/IMG.jpg.json"), &sc))
	require.NotNil(t, sc.Description)
	assert.Equal(t, "at the lake", *sc.Description)
	fi, err := os.Stat(filepath.Join(e.dir, "Trip/IMG.jpg"))
	require.NoError(t, err)
	assert.Equal(t, time.UnixMicro(1_500_000_000_000_000).Unix(), fi.ModTime().Unix())

	f.Edit(func(s *enteapitest.FileSpec) { s.EditedName = "Lake.jpg" })
	sum = e.mustRun()
	assert.Equal(t, downloads, e.downloads())
	assert.Equal(t, []string{"Trip/.meta/Lake.jpg.json", "Trip/.meta/album_meta.json", "Trip/Lake.jpg"}, sorted(e.walk()))
	assert.Len(t, e.kinds(FileRenamed), 1)
	e.same("Trip/Lake.jpg", f.Plaintext())
	assert.Equal(t, 1, sum.Updated, "a rename is a metadata update")
	assert.Zero(t, sum.New)

	a.Rename("Lake trip")
	e.mustRun()
	e.same("Lake trip/Lake.jpg", f.Plaintext())
	assert.Len(t, e.kinds(AlbumRenamed), 1)
	assert.Equal(t, downloads, e.downloads())
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestAFailingFileDoesNotStopTheRun(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Mixed")
	good := a.AddFile(enteapitest.FileSpec{Title: "good.jpg", Size: 100, Seed: 1})
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	also := a.AddFile(enteapitest.FileSpec{Title: "also.jpg", Size: 100, Seed: 3})
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, bad.ID), enteapitest.FlipAt(20))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Failed)
	assert.Equal(t, 2, sum.New)
	failed := e.kinds(FileFailed)
	require.Len(t, failed, 1)
	assert.Equal(t, "bad.jpg", failed[0].Title)
	assert.Equal(t, "Mixed", failed[0].Album)
	assert.Equal(t, bad.ID, failed[0].FileID)
	assert.ErrorIs(t, failed[0].Err, errs.ErrCorrupted)
	e.same("Mixed/good.jpg", good.Plaintext())
	e.same("Mixed/also.jpg", also.Plaintext())
	assert.NotContains(t, e.walk(), "Mixed/bad.jpg")

	// Next run retries it first, without listing the album's files again.
	diffs := e.s.Requests("GET /collections/v2/diff")
	sum = e.mustRun()
	assert.Equal(t, 1, sum.New)
	assert.Zero(t, sum.Failed)
	e.same("Mixed/bad.jpg", bad.Plaintext())
	assert.Equal(t, diffs, e.s.Requests("GET /collections/v2/diff"))
}

func TestInterruptedRunLeavesNoHalfFiles(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Big")
	f := a.AddFile(enteapitest.FileSpec{Title: "video.mp4", Size: 300 << 10, Seed: 1})
	e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), enteapitest.StallAfter(50<<10))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-e.s.Stalled
		cancel()
	}()
	_, err := Run(ctx, e.options())
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, e.walk(), "Big/video.mp4")
	e.noTemps()
	assert.Empty(t, e.kinds(LeftoversRemoved), "no leftovers, nothing said of them")

	// A run killed outright leaves its temp file: the next run removes it.
	require.NoError(t, os.WriteFile(filepath.Join(folder.At(e.dir).Temp(), durable.TempPrefix+"123"), []byte("half"), 0o644))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.New)
	assert.Len(t, e.kinds(LeftoversRemoved), 1)
	e.same("Big/video.mp4", f.Plaintext())
	e.noTemps()
}

func TestDeletionsAreReportedAndLocalCopiesKept(t *testing.T) {
	e := newEnv(t)
	a, b := e.u.AddAlbum("Keep"), e.u.AddAlbum("Gone")
	f := a.AddFile(enteapitest.FileSpec{Title: "trashed.jpg", Size: 10, Seed: 1})
	g := b.AddFile(enteapitest.FileSpec{Title: "in-deleted-album.jpg", Size: 10, Seed: 2})
	e.mustRun()
	f.Trash()
	b.Delete()
	sum := e.mustRun()
	assert.Equal(t, 1, sum.DeletedOnServer)
	assert.Equal(t, 1, sum.AlbumsDeleted)
	assert.Zero(t, sum.Failed)
	e.same("Keep/trashed.jpg", f.Plaintext())
	e.same("Gone/in-deleted-album.jpg", g.Plaintext())
}

func TestDeletedAlbumDiff404IsNotAFailure(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Vanishing")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.s.Inject("GET /collections/v2/diff", enteapitest.Status(404))
	sum := e.mustRun()
	assert.Equal(t, 1, sum.AlbumsDeleted)
	assert.Zero(t, sum.AlbumsFailed)
	assert.Zero(t, sum.Failed)
}

func TestSharedAndHiddenAlbumsAreBackedUp(t *testing.T) {
	e := newEnv(t)
	sam := e.s.AddUser("sam@example.org", "pw", enteapitest.UserOptions{})
	garden := sam.AddAlbum("Garden")
	rose := garden.AddFile(enteapitest.FileSpec{Title: "rose.jpg", Size: 50, Seed: 1})
	garden.ShareWith(e.u, "VIEWER")
	hidden := e.u.AddAlbum("Private")
	hidden.SetVisibility(2)
	secret := hidden.AddFile(enteapitest.FileSpec{Title: "secret.jpg", Size: 50, Seed: 2})
	e.mustRun()
	e.same("Garden/rose.jpg", rose.Plaintext())
	e.same("Private/secret.jpg", secret.Plaintext())
}

func TestUnauthorizedStopsTheRun(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	for i := 0; i < 5; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i)})
	}
	e.s.Inject("GET /collections/v2/diff", enteapitest.StatusBody(401, `{"error":"token expired"}`))
	sum, err := e.run()
	assert.ErrorIs(t, err, errs.ErrNotLoggedIn)
	assert.Zero(t, sum.Failed, "a dead session fails the run, not every file")
	assert.Zero(t, e.downloads())
}

// Each page announces what it will download before its downloads start,
// for the progress bar's totals: its files and their bytes; a page with
// nothing to download announces nothing.
func TestAPageAnnouncesWhatItDownloads(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 20, Seed: 2})
	e.mustRun()
	planned := e.kinds(Planned)
	require.Len(t, planned, 1)
	assert.Equal(t, Event{Kind: Planned, Album: "A", Files: 2, Bytes: 30}, planned[0])

	x.Edit(func(s *enteapitest.FileSpec) { s.Title = "x2.jpg" })
	e.mustRun()
	assert.Empty(t, e.kinds(Planned), "a rename downloads nothing")
}
