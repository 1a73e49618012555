package backup

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/layout"
)

// zipOf builds a live-photo archive with exactly these entries, in order.
func zipOf(t *testing.T, entries ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		require.NoError(t, err)
		_, _ = w.Write([]byte(e[1]))
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// Every name quak derives must fit the file system: a 300-byte title is
// saved, with its sidecar, and a second one like it gets a suffix that fits.
func TestLongTitlesAndTheirSidecarsFit(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	long := strings.Repeat("é", 148) + "xxxx.jpeg" // 305 bytes
	f1 := a.AddFile(enteapitest.FileSpec{Title: long, Size: 10, Seed: 1})
	f2 := a.AddFile(enteapitest.FileSpec{Title: long, Size: 10, Seed: 2})
	live := a.AddFile(enteapitest.FileSpec{Title: strings.Repeat("L", 300) + ".heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("i"), "mov", []byte("v"))})
	sum := e.mustRun()
	assert.Zero(t, sum.Failed)
	assert.Equal(t, 3, sum.New)
	names := map[string]bool{}
	for _, p := range e.walk() {
		for _, part := range strings.Split(filepath.ToSlash(p), "/") {
			assert.LessOrEqual(t, len(part), layout.MaxName, "a name over the limit: %q", part)
		}
		names[filepath.Base(p)] = true
	}
	var saved []string
	for n := range names {
		if strings.HasSuffix(n, ".jpeg") {
			saved = append(saved, n)
			assert.True(t, names[n+".json"], "no sidecar for %s", n)
			assert.LessOrEqual(t, len(n), layout.MaxFile)
		}
	}
	require.Len(t, saved, 2, "two distinct names for two files titled alike")
	contents := map[string]bool{}
	for _, n := range saved {
		contents[string(e.read(filepath.Join("A", n)))] = true
	}
	assert.True(t, contents[string(f1.Plaintext())] && contents[string(f2.Plaintext())], "both files saved whole")
	assert.Len(t, e.kinds(FileWarning), 0)
	_ = live
}

// A live photo whose archive is odd keeps the parts that are there and
// safe, under quak's own names, and says what was wrong.
func TestOddLivePhotosKeepTheirSafeParts(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Live")
	noVideo := a.AddFile(enteapitest.FileSpec{Title: "novideo.heic", FileType: 2,
		Data: zipOf(t, [2]string{"image.heic", "only the image"})})
	third := a.AddFile(enteapitest.FileSpec{Title: "third.heic", FileType: 2,
		Data: zipOf(t, [2]string{"image.heic", "img"}, [2]string{"video.mov", "vid"}, [2]string{"../../x", "escape"})})
	hostileImage := a.AddFile(enteapitest.FileSpec{Title: "hostile.heic", FileType: 2,
		Data: zipOf(t, [2]string{"image/../../evil.heic", "evil"}, [2]string{"video.mov", "vid2"})})
	sum := e.mustRun()
	assert.Zero(t, sum.Failed, "an odd archive must not lose the photo")
	assert.Equal(t, 3, sum.New)
	e.same("Live/novideo.heic", []byte("only the image"))
	e.same("Live/third.heic", []byte("img"))
	e.same("Live/third.mov", []byte("vid"))
	e.same("Live/hostile.mov", []byte("vid2"))
	assert.False(t, e.exists("Live/hostile.heic"), "the hostile entry was saved")
	for _, p := range e.walk() {
		assert.NotContains(t, p, "evil")
		assert.NotContains(t, filepath.Base(p), "x.", "the third entry was saved")
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(e.dir), "x"))
	assert.True(t, os.IsNotExist(err), "something was written outside DIR")
	warned := map[int64]string{}
	for _, ev := range e.kinds(FileWarning) {
		warned[ev.FileID] += ev.Err.Error()
	}
	assert.Contains(t, warned[noVideo.ID], "no usable video")
	assert.Contains(t, warned[third.ID], "../../x")
	assert.Contains(t, warned[hostileImage.ID], "image/../../evil.heic")
}
