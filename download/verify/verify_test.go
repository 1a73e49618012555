package verify

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
)

type fix struct {
	s     *enteapitest.Server
	u     *enteapitest.User
	dir   string
	views backup.Views
}

func (fx *fix) backup(tb testing.TB, redownload ...int64) *backup.Summary {
	tb.Helper()
	p := retry.Default()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	sum, err := backup.Run(context.Background(), backup.Options{
		Dir: fx.dir, Transfer: backup.Transfer{Policy: p}, Scope: backup.Scope{Redownload: redownload}, Views: fx.views,
		Source: backup.Source{Client: fx.s.Client(nil).WithToken(fx.u.Token()),
			Keys: catalog.Keys{UserID: fx.u.ID, MasterKey: fx.u.MasterKey, PublicKey: fx.u.PublicKey, SecretKey: fx.u.SecretKey}},
	})
	require.NoError(tb, err)
	return sum
}

func newFix(t *testing.T) *fix {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	return &fix{s: s, u: s.AddUser("a@example.org", "pw", enteapitest.UserOptions{}), dir: t.TempDir()}
}

func verifyAll(t *testing.T, dir string) (*Summary, []Problem) {
	t.Helper()
	var got []Problem
	sum, err := Run(context.Background(), Options{Dir: dir, Events: func(p Problem) { got = append(got, p) }})
	require.NoError(t, err)
	return sum, got
}

func TestFindsFlippedDeletedExtraAndUnlinked(t *testing.T) {
	fx := newFix(t)
	a := fx.u.AddAlbum("A")
	flipped := a.AddFile(enteapitest.FileSpec{Title: "flipped.jpg", Size: 3000, Seed: 1})
	gone := a.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Size: 100, Seed: 2})
	shared := a.AddFile(enteapitest.FileSpec{Title: "both.jpg", Size: 500, Seed: 3})
	fx.u.AddAlbum("B").Add(shared)
	a.AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("image"), "mov", []byte("video"))})
	fx.backup(t)

	sum, problems := verifyAll(t, fx.dir)
	require.Empty(t, problems)
	assert.True(t, sum.OK())
	assert.Equal(t, 4, sum.Total)
	assert.Equal(t, 4, sum.Checked)
	assert.Equal(t, int64(3000+100+500+len("image")+len("video")), sum.Bytes, "a hard-linked copy is read once")

	p := filepath.Join(fx.dir, "A", "flipped.jpg")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	b[1234] ^= 1
	require.NoError(t, os.WriteFile(p, b, 0o644))
	require.NoError(t, os.Remove(filepath.Join(fx.dir, "A", "gone.jpg")))
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "A", "stray.txt"), []byte("mine"), 0o644))
	// rsync without -H, say: B's copy is now a separate file, same bytes.
	bcopy := filepath.Join(fx.dir, "B", "both.jpg")
	data, err := os.ReadFile(bcopy)
	require.NoError(t, err)
	require.NoError(t, os.Remove(bcopy))
	require.NoError(t, os.WriteFile(bcopy, data, 0o644))

	sum, problems = verifyAll(t, fx.dir)
	byKind := map[Kind][]Problem{}
	for _, p := range problems {
		byKind[p.Kind] = append(byKind[p.Kind], p)
	}
	require.Len(t, byKind[Changed], 1)
	assert.Equal(t, flipped.ID, byKind[Changed][0].FileID)
	require.Len(t, byKind[Missing], 1)
	assert.Equal(t, gone.ID, byKind[Missing][0].FileID)
	assert.Equal(t, filepath.Join("A", "gone.jpg"), byKind[Missing][0].Path)
	require.Len(t, byKind[Extra], 1)
	assert.Equal(t, filepath.Join("A", "stray.txt"), byKind[Extra][0].Path)
	require.Len(t, byKind[Unlinked], 1)
	assert.Equal(t, shared.ID, byKind[Unlinked][0].FileID)
	assert.False(t, sum.OK())
	assert.ElementsMatch(t, []int64{flipped.ID, gone.ID}, sum.Redownload)
	rec, err := folder.At(fx.dir).LastVerify()
	require.NoError(t, err)
	assert.ElementsMatch(t, []folder.Damage{{FileID: flipped.ID, Kind: "changed", Path: filepath.Join("A", "flipped.jpg")},
		{FileID: gone.ID, Kind: "missing", Path: filepath.Join("A", "gone.jpg")}}, rec.Damaged,
		"the record keeps what is missing or changed, not what is extra or unlinked")
	assert.Equal(t, 4, rec.Checked)
	assert.Equal(t, 4, rec.Total)

	// backup with those files to download again puts them back, byte-exact.
	bs := fx.backup(t, sum.Redownload...)
	assert.Equal(t, 2, bs.LocalRestored)
	for name, f := range map[string]*enteapitest.File{"flipped.jpg": flipped, "gone.jpg": gone} {
		got, err := os.ReadFile(filepath.Join(fx.dir, "A", name))
		require.NoError(t, err)
		assert.Equal(t, f.Plaintext(), got, "%s is back, byte-exact, under its old name", name)
	}
	require.NoError(t, os.Remove(filepath.Join(fx.dir, "A", "stray.txt")))
	_, problems = verifyAll(t, fx.dir)
	for _, p := range problems {
		assert.Equal(t, Unlinked, p.Kind, "only the broken link remains: %+v", p)
	}
}

// The sidecars quak writes beside files are its own, not strangers' files;
// one for a file quak did not save is.
func TestQuaksOwnSidecarsAreNotExtra(t *testing.T) {
	fx := newFix(t)
	fx.views = backup.Views{XMP: true, Sidecars: sidecars.Takeout, DateView: "YYYY"}
	a := fx.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("image"), "mov", []byte("video"))})
	fx.backup(t)
	for _, own := range []string{"x.jpg.xmp", "x.jpg.supplemental-metadata.json", "live.mov.xmp", "metadata.json"} {
		require.FileExists(t, filepath.Join(fx.dir, "A", own))
	}
	_, problems := verifyAll(t, fx.dir)
	require.Empty(t, problems)

	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "A", "nobody.jpg"), []byte("<x/>"), 0o644))
	_, problems = verifyAll(t, fx.dir)
	require.Len(t, problems, 1)
	assert.Equal(t, Extra, problems[0].Kind)
	assert.Equal(t, filepath.Join("A", "nobody.jpg"), problems[0].Path)
}

// The files operating systems and photo managers drop into folders are
// never extra, nor those --ignore names; anything else still is.
func TestJunkAndIgnoredFilesAreNotExtra(t *testing.T) {
	fx := newFix(t)
	fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	fx.backup(t)
	for _, junk := range []string{".DS_Store", "Thumbs.db", "desktop.ini", "._x.jpg", "x.xmp", "IMG_1.JPG.XMP", "thumbs.DB", "notes.txt", "stray.jpg"} {
		require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "A", junk), []byte("j"), 0o644))
	}
	_, problems := verifyAll(t, fx.dir)
	var extra []string
	for _, p := range problems {
		extra = append(extra, p.Path)
	}
	assert.Equal(t, []string{filepath.Join("A", "notes.txt"), filepath.Join("A", "stray.jpg")}, extra)
	var got []Problem
	_, err := Run(context.Background(), Options{Dir: fx.dir, Ignore: []string{"*.TXT"}, Events: func(p Problem) { got = append(got, p) }})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, filepath.Join("A", "stray.jpg"), got[0].Path)
	assert.Error(t, ValidIgnore([]string{"[x"}))
	assert.NoError(t, ValidIgnore([]string{"*.txt"}))
}

// --sample checks the least recently verified first, so 1/PERCENT runs
// cover every file.
func TestSampleCoversEverythingIn1OverPercentRuns(t *testing.T) {
	fx := newFix(t)
	a := fx.u.AddAlbum("A")
	for i := 0; i < 10; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i)})
	}
	fx.backup(t)
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		pct  float64
		runs int
		per  int
	}{{10, 10, 1}, {30, 4, 3}, {25, 4, 3}} {
		start := day
		for run := 0; run < c.runs; run++ {
			day = day.Add(24 * time.Hour)
			now := day
			sum, err := Run(context.Background(), Options{Dir: fx.dir, Sample: c.pct, Now: func() time.Time { return now }})
			require.NoError(t, err)
			assert.Equal(t, c.per, sum.Checked, "%v%% of 10 files, rounded up", c.pct)
		}
		st, err := folder.At(fx.dir).OpenStateReadOnly()
		require.NoError(t, err)
		when, err := st.Verified()
		require.NoError(t, st.Close())
		require.NoError(t, err)
		require.Len(t, when, 10)
		for id, w := range when {
			assert.True(t, w.After(start), "%v%%: file %d not checked in %d runs", c.pct, id, c.runs)
		}
	}
}

func TestRefusesWhileABackupRunsAndWithoutABackup(t *testing.T) {
	fx := newFix(t)
	fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	_, err := Run(context.Background(), Options{Dir: fx.dir})
	var de *folder.DirError
	require.True(t, errors.As(err, &de), "%v", err)

	fx.backup(t)
	unlock, err := folder.At(fx.dir).Lock()
	require.NoError(t, err)
	_, err = Run(context.Background(), Options{Dir: fx.dir})
	require.ErrorIs(t, err, folder.ErrLocked)
	unlock()
}

// A live photo whose archive held one usable part is checked against that
// part's own hash.
func TestLivePhotoWithOnePart(t *testing.T) {
	fx := newFix(t)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("video.mov")
	require.NoError(t, err)
	_, _ = w.Write([]byte("only the video"))
	require.NoError(t, zw.Close())
	fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "v.heic", FileType: 2, Data: buf.Bytes()})
	fx.backup(t)
	sum, problems := verifyAll(t, fx.dir)
	require.Empty(t, problems)
	assert.Equal(t, 1, sum.Checked)
	p := filepath.Join(fx.dir, "A", "v.mov")
	require.NoError(t, os.WriteFile(p, []byte("only the videX"), 0o644))
	_, problems = verifyAll(t, fx.dir)
	require.Len(t, problems, 1)
	assert.Equal(t, Changed, problems[0].Kind)
}

// Nothing quak writes sits in an album folder unfinished, so a name is no
// excuse: a stray file named like a temp file is extra, and a saved file
// named so is checked like any other.
func TestTempNamesAreNoExcuse(t *testing.T) {
	fx := newFix(t)
	fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: ".quak-tmp-evil.jpg", Size: 10})
	fx.backup(t)
	stray := filepath.Join("A", ".quak-tmp-123")
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, stray), []byte("half"), 0o644))
	sum, problems := verifyAll(t, fx.dir)
	require.Len(t, problems, 1)
	assert.Equal(t, Problem{Kind: Extra, Path: stray, Detail: "not a file quak saved"}, problems[0])
	assert.Equal(t, 1, sum.Checked)
}

// A file kept although its bytes do not match Ente's hash is never called
// fine: verify reports it, and backup --verify downloads it again.
func TestAHashMismatchIsReported(t *testing.T) {
	fx := newFix(t)
	f := fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "odd.jpg", Size: 100, Hash: "Ym9ndXMgaGFzaA=="})
	fx.backup(t)
	sum, problems := verifyAll(t, fx.dir)
	require.Len(t, problems, 1)
	assert.Equal(t, Problem{Kind: Mismatch, FileID: f.ID, Path: filepath.Join("A", "odd.jpg"),
		Detail: "its bytes do not match Ente's hash for it (what the uploader sent, or a damaged download)"}, problems[0])
	assert.False(t, sum.OK())
	assert.Equal(t, []int64{f.ID}, sum.Redownload)
}

// On a disk without hard links, backup copies a file into its second
// album and records the copy as one: verify does not call it unlinked
// (which would exit 2 for ever), but still checks its bytes.
func TestRecordedCopiesAreNotUnlinked(t *testing.T) {
	fx := newFix(t)
	f := fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 500, Seed: 3})
	b := fx.u.AddAlbum("B")
	b.Add(f)
	fx.backup(t)
	// What backup does where links are impossible: a copy, recorded as one.
	bcopy := filepath.Join(fx.dir, "B", "x.jpg")
	data, err := os.ReadFile(bcopy)
	require.NoError(t, err)
	require.NoError(t, os.Remove(bcopy))
	require.NoError(t, os.WriteFile(bcopy, data, 0o644))
	st, err := folder.At(fx.dir).OpenState()
	require.NoError(t, err)
	rec, err := st.File(f.ID)
	require.NoError(t, err)
	rec.Entries[b.ID].Copy = true
	require.NoError(t, st.Commit([]*state.File{rec}, nil))
	require.NoError(t, st.Close())

	sum, problems := verifyAll(t, fx.dir)
	assert.Empty(t, problems)
	assert.True(t, sum.OK())
	data[7] ^= 1
	require.NoError(t, os.WriteFile(bcopy, data, 0o644))
	_, problems = verifyAll(t, fx.dir)
	require.Len(t, problems, 1)
	assert.Equal(t, Changed, problems[0].Kind, "a copy's bytes are still checked")
}

// With --xmp and Takeout sidecars, verify still tells quak's files from
// the rest: the sidecars of every saved file (one named like a temp file,
// one kept with a hash mismatch) are quak's, the mismatch is reported as
// such, and a stray temp-named file is extra (an XMP file beside it is
// not: other tools write those).
func TestSidecarsTempNamesAndMismatchesTogether(t *testing.T) {
	fx := newFix(t)
	fx.views = backup.Views{XMP: true, Sidecars: sidecars.Takeout, DateView: "YYYY"}
	a := fx.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: ".quak-tmp-evil.jpg", Size: 10})
	odd := a.AddFile(enteapitest.FileSpec{Title: "odd.jpg", Size: 100, Hash: "Ym9ndXMgaGFzaA=="})
	fx.backup(t)
	for _, own := range []string{".quak-tmp-evil.jpg.xmp", ".quak-tmp-evil.jpg.supplemental-metadata.json", "odd.jpg.xmp", "odd.jpg.supplemental-metadata.json"} {
		require.FileExists(t, filepath.Join(fx.dir, "A", own))
	}
	for _, stray := range []string{".quak-tmp-123", ".quak-tmp-123.xmp"} {
		require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "A", stray), []byte("half"), 0o644))
	}
	sum, problems := verifyAll(t, fx.dir)
	assert.Equal(t, 2, sum.Checked)
	assert.ElementsMatch(t, []Problem{
		{Kind: Mismatch, FileID: odd.ID, Path: filepath.Join("A", "odd.jpg"),
			Detail: "its bytes do not match Ente's hash for it (what the uploader sent, or a damaged download)"},
		{Kind: Extra, Path: filepath.Join("A", ".quak-tmp-123"), Detail: "not a file quak saved"},
	}, problems)
}

// A file recorded without a usable hash (a live photo from a client that
// sent none) has nothing to be compared with: its parts are only checked
// to be there.
func TestAFileWithoutAHashIsOnlyCheckedToBeThere(t *testing.T) {
	fx := newFix(t)
	f := fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("image"), "mov", []byte("video"))})
	fx.backup(t)
	st, err := folder.At(fx.dir).OpenState()
	require.NoError(t, err)
	rec, err := st.File(f.ID)
	require.NoError(t, err)
	rec.LocalHash, rec.Meta.Hash = "", ""
	require.NoError(t, st.Commit([]*state.File{rec}, nil))
	require.NoError(t, st.Close())
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "A", "live.mov"), []byte("other"), 0o644))

	sum, problems := verifyAll(t, fx.dir)
	assert.Empty(t, problems)
	assert.Equal(t, 1, sum.Checked)
	assert.Zero(t, sum.Bytes, "nothing to compare, nothing read")
	require.NoError(t, os.Remove(filepath.Join(fx.dir, "A", "live.heic")))
	_, problems = verifyAll(t, fx.dir)
	assert.Equal(t, []Problem{{Kind: Missing, FileID: f.ID, Path: filepath.Join("A", "live.heic")}}, problems)
}

// An album copy with more parts than the first (a live photo that lost a
// part keeps its old parts in its other albums) is compared with the
// first part for part, as far as the first goes.
func TestACopyWithMorePartsThanTheFirst(t *testing.T) {
	fx := newFix(t)
	f := fx.u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 500, Seed: 3})
	b := fx.u.AddAlbum("B")
	b.Add(f)
	fx.backup(t)
	require.NoError(t, os.WriteFile(filepath.Join(fx.dir, "B", "x.mov"), []byte("old part"), 0o644))
	st, err := folder.At(fx.dir).OpenState()
	require.NoError(t, err)
	rec, err := st.File(f.ID)
	require.NoError(t, err)
	rec.Entries[b.ID].Parts = append(rec.Entries[b.ID].Parts, "x.mov")
	require.NoError(t, st.Commit([]*state.File{rec}, nil))
	require.NoError(t, st.Close())

	sum, problems := verifyAll(t, fx.dir)
	assert.Empty(t, problems)
	assert.True(t, sum.OK())
	assert.Equal(t, int64(500), sum.Bytes)
}
