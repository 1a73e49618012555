package takeout

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// faultTakeout has a photo in two albums, a favourite, an archived photo,
// a live photo and a video streamed as it is read.
func faultTakeout() []tfile {
	return append(bigTakeout(bigSize),
		f(gp+"Beach/IMG_0001.jpg", jpeg(1)), f(gp+"Beach/IMG_0001.jpg.json", photoJSON("IMG_0001.jpg", t2019, map[string]any{"favorited": true})),
		f(gp+"Beach/metadata.json", albumJSON("Beach")),
		f(gp+"Beach/IMG_0005.HEIC", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic another heic")),
		f(gp+"Beach/IMG_0005.HEIC.json", photoJSON("IMG_0005.HEIC", t2022, nil)),
		f(gp+"Beach/IMG_0005.MOV", movie(unix(t2022+1), 3000, false, 5)))
}

// faultWant is the account faultTakeout makes.
func faultWant() map[string]string {
	return map[string]string{"IMG_0001.jpg": "Beach, Favorites, Videos", "VID_0001.mp4": "Videos", "IMG_0005.HEIC": "Beach"}
}

func accountAlbums(a *account) map[string]string {
	out := map[string]string{}
	for _, f := range a.files() {
		if _, dup := out[f.meta.Title]; dup {
			out[f.meta.Title] = "twice"
			continue
		}
		out[f.meta.Title] = joinNames(f.albums)
	}
	return out
}

// Every answer of the upload path refused, lost or cut, once (retries
// absorb it) or until the file fails: a second run ends with each
// original once, in its albums.
func TestImportEveryAnswerCutLostOrRefusedEndsExactlyOnce(t *testing.T) {
	routes := []string{"POST /collections", "POST /files/upload-url", "GET /files/multipart-upload-urls", "POST /files",
		"POST /collections/add-files", "GET /collections/v2/diff", "GET /collections/v2", "GET /users/details/v2",
		"UPLOAD " + enteapitest.StepPut, "UPLOAD " + enteapitest.StepPart, "UPLOAD " + enteapitest.StepComplete}
	faults := map[string]enteapitest.Fault{
		"refused": enteapitest.Status(500), "lost": enteapitest.LoseResponse(), "cut": enteapitest.CutAfter(3),
	}
	// The stream's routes, and the commit, also with a tgz, whose bytes
	// only come again in the next run's pass.
	tgzToo := map[string]bool{"GET /files/multipart-upload-urls": true, "POST /files": true,
		"UPLOAD " + enteapitest.StepPart: true, "UPLOAD " + enteapitest.StepComplete: true}
	for _, route := range routes {
		for name, fault := range faults {
			for _, n := range []int{1, 5} {
				if n == 1 && route != "POST /files" {
					continue // absorbed by retries, as restore's tests show
				}
				t.Run(fmt.Sprintf("%s/%s/%d", route, name, n), func(t *testing.T) {
					kinds := []string{"zip"}
					if tgzToo[route] {
						kinds = append(kinds, "tgz")
					}
					for _, kind := range kinds {
						a := newAccount(t)
						paths := writeParts(t, t.TempDir(), split(faultTakeout(), 2), kind)
						a.s.Inject(route, enteapitest.Repeat(fault, n)...)
						_, _ = a.importWith(paths, Options{}, a.options())
						a.s.ClearFaults(route)
						a.s.Settle()
						sum, err := a.importWith(paths, Options{}, a.options())
						require.NoError(t, err, kind)
						assert.Empty(t, sum.Failures, kind)
						assert.Equal(t, faultWant(), accountAlbums(a), kind)
					}
				})
			}
		}
	}
}
