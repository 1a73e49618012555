package backup

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	a.AddFile(enteapitest.FileSpec{Title: strings.Repeat("L", 300) + ".heic", FileType: 2,
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
	// The live photo's two parts, cut alike, keep their own extensions.
	for _, ext := range []string{".heic", ".mov"} {
		n := strings.Repeat("L", layout.MaxFile-len(ext)) + ext
		assert.True(t, names[n], "live-photo part %s…%s", n[:4], ext)
	}
	assert.True(t, names[strings.Repeat("L", layout.MaxFile-len(".heic"))+".heic.json"], "and its sidecar")
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

// peakHeap samples the heap while run runs and returns its peak.
func peakHeap(run func()) uint64 {
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	run()
	close(done)
	<-stopped
	return peak
}

// The hostile corpus: names and bytes another person controls through a
// shared album, and a server that lies. Each file ends with a safe name or
// a clear error naming it; nothing is written outside DIR; memory stays
// bounded; no panic; the rest of the library is saved.
func TestHostileCorpus(t *testing.T) {
	e := newEnv(t)
	titles := []string{"../../escape.jpg", "/etc/passwd", "a\x00b.jpg", "ctrl\x01\x1f.jpg", "photo\u202egpj.exe",
		strings.Repeat("n", 1000) + ".jpg", "CON.jpg", "nul", "COM1", "Case.jpg", "case.JPG", "caf\u00e9.jpg",
		"cafe\u0301.jpg", "..", ".", "", " . ", `a/b\c.jpg`, `C:\x.jpg`, "\xff\xfe.jpg"}
	albums := []string{"../../outside", "/abs", "\x00", "CON", strings.Repeat("A", 1000), "a/b", ".."}
	var good []*enteapitest.File
	for i, an := range albums {
		a := e.u.AddAlbum(an)
		for j, title := range titles {
			if (i+j)%3 == 0 { // every title, spread over the albums
				good = append(good, a.AddFile(enteapitest.FileSpec{Title: title, Size: int64(10 + j), Seed: byte(j)}))
			}
		}
	}
	sam := e.s.AddUser("sam@example.org", "pw", enteapitest.UserOptions{})
	liar := sam.AddAlbum("Lies")
	lies := map[int64]string{}
	for _, spec := range []enteapitest.FileSpec{
		{Title: "ten-terabytes.mp4", Size: 1000, AnnounceSize: 10 << 40},
		{Title: "elsewhere.jpg", Size: 10, RedirectTo: "file:///etc/passwd"},
		{Title: "gopher.jpg", Size: 10, RedirectTo: "gopher://127.0.0.1/x"},
		{Title: "short-key.jpg", Size: 10, KeyLen: 16},
		{Title: "endless.mp4", Size: 10, EndlessBody: true},
		{Title: "bad-json.jpg", Size: 10, BadMetadata: true},
	} {
		lies[liar.AddFile(spec).ID] = spec.Title
	}
	liar.ShareWith(e.u, "VIEWER")
	sealedElsewhere := sam.AddAlbum("Not for you")
	sealedElsewhere.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	sealedElsewhere.ShareSealedToOther(e.u)
	forever := e.u.AddAlbum("Forever")
	good = append(good, forever.AddFile(enteapitest.FileSpec{Title: "f.jpg", Size: 10})) // saved before the listing stalls
	forever.NeverEnding()

	parent := filepath.Dir(e.dir)
	var sum *Summary
	peak := peakHeap(func() {
		var err error
		sum, err = Run(t.Context(), e.options())
		require.NoError(t, err)
	})
	assert.Less(t, peak, uint64(256<<20), "heap peaked at %d MiB", peak>>20)
	assert.Equal(t, len(good), sum.New+sum.Linked, "every hostile name got a safe one and was saved")
	assert.Equal(t, 6, sum.Failed, "each lying file fails on its own")
	assert.Equal(t, 2, sum.AlbumsFailed, "the key sealed to someone else, the listing that never ends")
	failed := map[string]string{}
	for _, ev := range e.kinds(FileFailed) {
		failed[lies[ev.FileID]] = ev.Err.Error()
		assert.Contains(t, ev.Err.Error(), fmt.Sprintf("file %d", ev.FileID), "the error names the file")
	}
	assert.Contains(t, failed["ten-terabytes.mp4"], "short of its announced size")
	assert.Contains(t, failed["elsewhere.jpg"], "unsupported protocol scheme")
	assert.Contains(t, failed["gopher.jpg"], "unsupported protocol scheme")
	assert.Contains(t, failed["short-key.jpg"], "key must be 32 bytes")
	assert.Contains(t, failed["endless.mp4"], "corrupted")
	assert.Contains(t, failed["bad-json.jpg"], "reading its metadata")

	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only DIR in its parent: nothing written outside")
	contents := map[string]bool{}
	for _, f := range good {
		contents[string(f.Plaintext())] = true
	}
	for _, p := range e.walk() {
		for _, part := range strings.Split(filepath.ToSlash(p), "/") {
			assert.LessOrEqual(t, len(part), layout.MaxName, "%q", part)
			assert.True(t, utf8.ValidString(part), "%q", part)
			assert.NotContains(t, part, "\x00")
			assert.NotContains(t, part, "\u202e")
			assert.NotEqual(t, "..", part)
		}
		if !strings.Contains(p, ".meta") {
			assert.True(t, contents[string(e.read(p))], "%s holds bytes of no file", p)
		}
	}
	assert.Zero(t, e.s.Leaks())
}
