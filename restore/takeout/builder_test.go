package takeout

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/restore"
	tt "github.com/quak-photos/quak/restore/takeout/takeouttest"
)

// f is a file of a Takeout.
func f(name string, data []byte) tfile { return tfile{Name: name, Data: data} }

// The builder's names, short for this package's tests.
type tfile = tt.File

const gp = tt.GP

var (
	jpeg       = tt.JPEG
	exifJPEG   = tt.ExifJPEG
	movie      = tt.Movie
	photoJSON  = tt.PhotoJSON
	albumJSON  = tt.AlbumJSON
	split      = tt.Split
	writeParts = tt.WriteParts
)

func openTakeout(t *testing.T, paths []string, o Options) *Takeout {
	t.Helper()
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }
	}
	tk, err := Open(t.Context(), paths, o)
	require.NoError(t, err)
	t.Cleanup(tk.Close)
	return tk
}

// byTitle finds the originals of a Takeout by title.
func byTitle(t *testing.T, tk *Takeout, title string) []*originalView {
	t.Helper()
	var out []*originalView
	for _, o := range tk.Originals {
		if o.Title == title {
			out = append(out, viewOf(tk, o))
		}
	}
	return out
}

var (
	noise    = tt.Noise
	writeDir = tt.WriteDir
)

func sortedStrings(ss []string) []string {
	sort.Strings(ss)
	return ss
}

// restoreImport imports an opened Takeout into a.
func restoreImport(a *account, tk *Takeout) (*restore.Summary, error) {
	return restore.Import(a.t.Context(), a.options(), tk.Albums, tk.Originals, tk)
}

func unix(s int64) time.Time { return time.Unix(s, 0) }

func joinNames(ss []string) string { return strings.Join(sortedStrings(ss), ", ") }
