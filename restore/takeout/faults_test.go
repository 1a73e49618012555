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

// Every answer of the upload path refused, lost or cut until the file
// fails (a single one is absorbed by retries, as restore's tests show): a
// second run ends with each original once, in its albums. An API call is
// lost (applied, its answer never received) or refused; a store write is
// refused or cut. The stream's routes and the commit are also tried with
// a tgz, whose bytes come again only in the next run's pass.
func TestImportEveryAnswerCutLostOrRefusedEndsExactlyOnce(t *testing.T) {
	api := []enteapitest.Fault{enteapitest.LoseResponse(), enteapitest.Status(500)}
	store := []enteapitest.Fault{enteapitest.Status(500), enteapitest.CutAfter(3)}
	cases := []struct {
		route  string
		faults []enteapitest.Fault
		tgz    bool
	}{
		{"POST /collections", api, false},
		{"POST /files/upload-url", api, false},
		{"GET /files/multipart-upload-urls", api, true},
		{"POST /files", append(api, enteapitest.CutAfter(3)), true},
		{"POST /collections/add-files", api, false},
		{"GET /collections/v2/diff", api, false},
		{"UPLOAD " + enteapitest.StepPut, store, false},
		{"UPLOAD " + enteapitest.StepPart, store, true},
		{"UPLOAD " + enteapitest.StepComplete, append(store, enteapitest.LoseResponse()), true},
	}
	for _, c := range cases {
		for i, fault := range c.faults {
			t.Run(fmt.Sprintf("%s/%d", c.route, i), func(t *testing.T) {
				kinds := []string{"zip"}
				if c.tgz {
					kinds = append(kinds, "tgz")
				}
				for _, kind := range kinds {
					a := newAccount(t)
					paths := writeParts(t, t.TempDir(), split(faultTakeout(), 2), kind)
					a.s.Inject(c.route, enteapitest.Repeat(fault, 5)...)
					_, _ = a.importWith(paths, Options{}, a.options())
					a.s.ClearFaults(c.route)
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
