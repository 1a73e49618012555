package backup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars/sidecarstest"
)

// randomSpec draws a file with one combination of the metadata Ente allows.
func randomSpec(r *rand.Rand, i int) enteapitest.FileSpec {
	s := enteapitest.FileSpec{Title: fmt.Sprintf("f%02d.jpg", i), Size: int64(10 + r.IntN(100)), Seed: byte(i),
		CreationTime: r.Int64N(7_600_000_000_000_000) - 3_800_000_000_000_000} // 1849 to 2090
	s.ModificationTime = s.CreationTime + r.Int64N(1_000_000_000)
	texts := []string{"line 1\nline 2", "<tag> & \"quotes\" 'single'", "\tindented ]]>", "写真 🎉", "  spaced  ", "a\r\nb"}
	if r.IntN(3) > 0 {
		s.Caption = texts[r.IntN(len(texts))] + texts[r.IntN(len(texts))]
	}
	switch r.IntN(5) {
	case 1:
		s.Latitude, s.Longitude = r.Float64()*180-90, r.Float64()*360-180
	case 2:
		s.ZeroLocation = true
	case 3:
		s.Latitude, s.Longitude = r.Float64()*90, -r.Float64()*180
	case 4:
		s.Latitude, s.Longitude = 1, 1
		s.EditedLatitude, s.EditedLongitude = -r.Float64()*90, r.Float64()*180
	}
	if r.IntN(3) == 0 {
		s.OffsetTime = []string{"+05:30", "-03:30", "+00:00", "+14:00", "-11:00"}[r.IntN(5)]
	}
	if r.IntN(4) == 0 {
		s.EditedTime = r.Int64N(7_600_000_000_000_000) - 3_800_000_000_000_000
	}
	return s
}

// Every combination of metadata round-trips through a real backup: what
// exiftool and a strict Takeout decoder read is what the server holds.
func TestEveryMetadataCombinationRoundTripsThroughABackup(t *testing.T) {
	sidecarstest.RequireExiftool(t)
	e := newEnv(t)
	e.views = allViews()
	a, b := e.u.AddAlbum("A"), e.u.AddAlbum("B")
	favs := e.u.AddCollection("Favorites", "favorites")
	r := rand.New(rand.NewPCG(18, 2))
	var specs []enteapitest.FileSpec
	var inB, fav []bool
	for i := range 40 {
		s := randomSpec(r, i)
		f := a.AddFile(s)
		specs = append(specs, s)
		inB, fav = append(inB, r.IntN(2) == 0), append(fav, r.IntN(3) == 0)
		if inB[i] {
			b.Add(f)
		}
		if fav[i] {
			favs.Add(f)
		}
	}
	sum := e.mustRun()
	require.Zero(t, sum.Failed)
	rels := make([]string, len(specs))
	for i, s := range specs {
		rels[i] = "A/" + s.Title + ".xmp"
	}
	got := e.xmps(rels...)
	for i, s := range specs {
		t.Run(s.Title, func(t *testing.T) {
			x := got[rels[i]]
			us := s.CreationTime
			if s.EditedTime != 0 {
				us = s.EditedTime
			}
			want := time.UnixMicro(us).In(est)
			if s.OffsetTime != "" {
				tz, _ := time.Parse("-07:00", s.OffsetTime)
				_, off := tz.Zone()
				want = want.In(time.FixedZone("", off))
			}
			assert.True(t, x.DateTimeOriginal.Equal(want), "date %s, want %s", x.DateTimeOriginal, want)
			_, gotOff := x.DateTimeOriginal.Zone()
			_, wantOff := want.Zone()
			assert.Equal(t, wantOff, gotOff, "offset")
			lat, lon := s.Latitude, s.Longitude
			if s.EditedLatitude != 0 || s.EditedLongitude != 0 {
				lat, lon = s.EditedLatitude, s.EditedLongitude
			}
			if lat == 0 && lon == 0 {
				assert.False(t, x.HasGPS)
			} else {
				assert.InDelta(t, lat, x.Lat, 1e-6)
				assert.InDelta(t, lon, x.Lon, 1e-6)
			}
			assert.Equal(t, s.Caption, x.Description)
			assert.Equal(t, fav[i], x.Rating == "5")
			wantAlbums := []string{"A"}
			if inB[i] {
				wantAlbums = append(wantAlbums, "B")
			}
			assert.Equal(t, wantAlbums, x.Subject)

			tk := e.takeout("A/" + s.Title + ".supplemental-metadata.json")
			assert.Equal(t, want.Unix(), tk.Taken.Unix())
			assert.Equal(t, time.UnixMicro(s.ModificationTime).Unix(), tk.Modified.Unix())
			assert.Equal(t, s.Caption, tk.Description)
			assert.Equal(t, fav[i], tk.Favorited)
			assert.Equal(t, lat, tk.Lat)
			assert.Equal(t, lon, tk.Lon)
			view := filepath.Join(DateViewDir, want.In(est).Format("2006/01"), s.Title)
			assert.True(t, e.sameInode(view, "A/"+s.Title), "%s", view)
		})
	}
}

func inodeOf(fi os.FileInfo) uint64 { return fi.Sys().(*syscall.Stat_t).Ino }

func TestMetadataOnlyRestoresLocalLossesAndLeavesTheUsersEdits(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1,
		CreationTime: time.Date(2020, 1, 10, 12, 0, 0, 0, time.UTC).UnixMicro()})
	// A lost metadata.json is dated when it is written again: one clock for
	// every run, so the runs never straddle a second.
	clock := func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) }
	run := func(metaOnly bool) {
		t.Helper()
		o := e.options()
		o.Now, o.MetadataOnly = clock, metaOnly
		_, err := Run(context.Background(), o)
		require.NoError(t, err)
	}
	run(false)
	want := map[string][]byte{}
	lost := []string{"A/x.jpg.xmp", "A/x.jpg.supplemental-metadata.json", "A/metadata.json", "By date/2020/01/x.jpg", "By date/2020/01/x.jpg.xmp"}
	for _, p := range lost {
		want[p] = e.read(p)
		require.NoError(t, os.Remove(filepath.Join(e.dir, p)))
	}
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "A/x.jpg.xmp"), []byte("edited by hand"), 0o644))

	run(false)
	assert.False(t, e.exists("A/x.jpg.supplemental-metadata.json"), "an ordinary run does not look")

	run(true)
	for p, b := range want {
		if p == "A/x.jpg.xmp" || p == "By date/2020/01/x.jpg.xmp" {
			continue
		}
		assert.Equal(t, string(b), string(e.read(p)), p)
	}
	assert.True(t, e.sameInode("By date/2020/01/x.jpg", "A/x.jpg"))
	// The XMP edited by hand no longer holds what quak wrote: it is the
	// user's, left as it is and not linked into the date view.
	assert.Equal(t, "edited by hand", string(e.read("A/x.jpg.xmp")))
	assert.False(t, e.exists("By date/2020/01/x.jpg.xmp"))
	// Deleted, it is quak's again.
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A/x.jpg.xmp")))
	run(true)
	assert.Equal(t, string(want["A/x.jpg.xmp"]), string(e.read("A/x.jpg.xmp")))
	assert.True(t, e.sameInode("By date/2020/01/x.jpg.xmp", "A/x.jpg.xmp"))
}

// A change of views cut short (the run killed half-way) is finished by the
// next run, though its options are already the folder's.
func TestAHalfDoneChangeOfViewsIsFinished(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	e.mustRun()
	e.views = Views{XMP: true, Zone: est}
	e.mustRun()
	// As a run killed after converting x.jpg only would leave it.
	require.NoError(t, os.Remove(filepath.Join(e.dir, "A/y.jpg.xmp")))
	m, err := folder.At(e.dir).ReadViewOptions()
	require.NoError(t, err)
	m.Applied = false
	require.NoError(t, folder.At(e.dir).WriteViewOptions(*m))

	e.mustRun()
	assert.True(t, e.exists("A/y.jpg.xmp"), "the change was finished")
	m, err = folder.At(e.dir).ReadViewOptions()
	require.NoError(t, err)
	assert.True(t, m.Applied)
}

func (e *env) metadataOnly() {
	e.t.Helper()
	o := e.options()
	o.MetadataOnly = true
	e.mu.Lock()
	e.events = nil
	e.mu.Unlock()
	_, err := Run(context.Background(), o)
	require.NoError(e.t, err)
}

// A full look at an intact backup (--metadata-only) finds nothing to
// change and rewrites nothing.
func TestAFullLookAtIntactViewsChangesNothing(t *testing.T) {
	e := newEnv(t)
	e.views = allViews()
	viewsLibrary(e)
	e.mustRun()
	before := map[string]uint64{}
	for _, p := range e.walk() {
		before[p] = e.inode(p)
	}
	e.metadataOnly()
	assert.Empty(t, e.kinds(ViewsChanged))
	for p, ino := range before {
		assert.Equal(t, ino, e.inode(p), "%s was made again", p)
	}
	assert.Len(t, e.walk(), len(before))
}
