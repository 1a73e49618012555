package backup

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
)

// media lists saved files (no sidecars), sorted.
func (e *env) media() []string {
	var out []string
	for _, p := range e.walk() {
		if !strings.Contains(p, ".meta") {
			out = append(out, filepath.ToSlash(p))
		}
	}
	sort.Strings(out)
	return out
}

func (e *env) runWith(f filter.Set) *Summary {
	e.t.Helper()
	o := e.options()
	o.Filter = f
	sum, err := Run(context.Background(), o)
	require.NoError(e.t, err)
	return sum
}

var (
	jan2020 = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	jan2024 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
)

// filterLibrary has one of everything the filters can tell apart.
func filterLibrary(e *env) {
	hol := e.u.AddAlbum("Holidays")
	hol.AddFile(enteapitest.FileSpec{Title: "old.jpg", Size: 10, CreationTime: jan2020.UnixMicro()})
	hol.AddFile(enteapitest.FileSpec{Title: "new.jpg", Size: 10, CreationTime: jan2024.UnixMicro()})
	hol.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 10, CreationTime: jan2024.UnixMicro()})
	hol.AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2, CreationTime: jan2024.UnixMicro(),
		Data: enteapitest.LivePhoto("heic", []byte("i"), "mov", []byte("v"))})
	e.u.AddAlbum("Work").AddFile(enteapitest.FileSpec{Title: "work.jpg", Size: 10, CreationTime: jan2024.UnixMicro()})
	hidden := e.u.AddAlbum("Private")
	hidden.SetVisibility(2)
	hidden.AddFile(enteapitest.FileSpec{Title: "secret.jpg", Size: 10, CreationTime: jan2024.UnixMicro()})
	archived := e.u.AddAlbum("Old")
	archived.SetVisibility(1)
	archived.AddFile(enteapitest.FileSpec{Title: "archived.jpg", Size: 10, CreationTime: jan2024.UnixMicro()})
	sam := e.s.AddUser("sam@example.org", "pw", enteapitest.UserOptions{})
	garden := sam.AddAlbum("Garden")
	garden.AddFile(enteapitest.FileSpec{Title: "rose.jpg", Size: 10, CreationTime: jan2024.UnixMicro()})
	garden.ShareWith(e.u, "VIEWER")
}

var everything = []string{"Garden/rose.jpg", "Holidays/clip.mp4", "Holidays/live.heic", "Holidays/live.mov",
	"Holidays/new.jpg", "Holidays/old.jpg", "Old/archived.jpg", "Private/secret.jpg", "Work/work.jpg"}

func TestEachFilterSelectsExactlyWhatItNames(t *testing.T) {
	for _, c := range []struct {
		name string
		f    filter.Set
		want []string
	}{
		{"albums", filter.Set{Albums: filter.Albums{Include: []string{"holi*", "work"}}},
			[]string{"Holidays/clip.mp4", "Holidays/live.heic", "Holidays/live.mov", "Holidays/new.jpg", "Holidays/old.jpg", "Work/work.jpg"}},
		{"exclude-albums", filter.Set{Albums: filter.Albums{Exclude: []string{"Holidays"}}},
			[]string{"Garden/rose.jpg", "Old/archived.jpg", "Private/secret.jpg", "Work/work.jpg"}},
		{"no-shared", filter.Set{NoShared: true}, without(everything, "Garden/rose.jpg")},
		{"no-hidden", filter.Set{NoHidden: true}, without(everything, "Private/secret.jpg")},
		{"no-archived", filter.Set{NoArchived: true}, without(everything, "Old/archived.jpg")},
		{"since", filter.Set{Since: jan2024}, without(everything, "Holidays/old.jpg")},
		{"until", filter.Set{Until: jan2024}, []string{"Holidays/old.jpg"}},
		{"skip-videos", filter.Set{SkipVideos: true}, without(everything, "Holidays/clip.mp4")},
		{"skip-live-photos", filter.Set{SkipLive: true}, without(everything, "Holidays/live.heic", "Holidays/live.mov")},
		{"none", filter.Set{}, everything},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			filterLibrary(e)
			sum := e.runWith(c.f)
			assert.Equal(t, c.want, e.media())
			assert.Zero(t, sum.Failed)
		})
	}
}

func without(all []string, drop ...string) []string {
	var out []string
	for _, a := range all {
		keep := true
		for _, d := range drop {
			keep = keep && a != d
		}
		if keep {
			out = append(out, a)
		}
	}
	return out
}

// Widening the filters later fetches exactly what was left out, files from
// the remembered entries without listing their albums again.
func TestWideningFetchesTheRestWithoutRelisting(t *testing.T) {
	e := newEnv(t)
	filterLibrary(e)
	narrow := e.runWith(filter.Set{Since: jan2024, SkipVideos: true, SkipLive: true, NoHidden: true})
	assert.Equal(t, 3, narrow.Skipped, "old.jpg, clip.mp4 and the live photo")
	diffs := e.s.Requests("GET /collections/v2/diff")
	downloads := e.downloads()

	wide := e.runWith(filter.Set{})
	assert.Equal(t, everything, e.media())
	assert.Equal(t, 4, wide.New, "the three skipped files and the hidden album's")
	assert.Equal(t, downloads+4, e.downloads(), "nothing downloaded twice")
	assert.Equal(t, diffs+1, e.s.Requests("GET /collections/v2/diff"), "only the hidden album, never listed before, is listed")
	assert.Zero(t, e.runWith(filter.Set{}).New, "and then nothing is left")
}
