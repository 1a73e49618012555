package takeout

import (
	"context"
	"io"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/restore"
)

// drain reads every original of tk as an import would, and returns the
// bytes of each part read.
func drain(t *testing.T, tk *Takeout) map[*restore.Original][][]byte {
	t.Helper()
	got := map[*restore.Original][][]byte{}
	var failed []string
	put := func(_ context.Context, o *restore.Original, parts []io.Reader) error {
		var bs [][]byte
		for _, r := range parts {
			b, err := io.ReadAll(r)
			if err != nil {
				return err
			}
			bs = append(bs, b)
		}
		got[o] = bs
		return nil
	}
	err := tk.Read(t.Context(), tk.Originals, func(ctx context.Context, o *restore.Original, parts []io.Reader) error {
		tk.mu.Lock()
		defer tk.mu.Unlock()
		return put(ctx, o, parts)
	}, func(o *restore.Original, err error) { failed = append(failed, o.Where+": "+err.Error()) })
	require.NoError(t, err)
	require.Empty(t, failed)
	return got
}

// views are the originals of tk as tests compare them, sorted by title
// and time.
func views(tk *Takeout) []*originalView {
	var out []*originalView
	for _, o := range tk.Originals {
		out = append(out, viewOf(tk, o))
	}
	sortViews(out)
	return out
}

func sortViews(vs []*originalView) {
	sort.Slice(vs, func(i, j int) bool {
		if vs[i].title != vs[j].title {
			return vs[i].title < vs[j].title
		}
		return vs[i].created < vs[j].created
	})
}

func wantViews() []*originalView {
	var out []*originalView
	for _, w := range trapWant() {
		out = append(out, view(w))
	}
	sortViews(out)
	return out
}

func TestOpenReadsEveryTrapOfATakeoutInEachForm(t *testing.T) {
	for _, kinds := range [][]string{{"zip"}, {"tgz"}, {"dir"}, {"zip", "tgz", "dir"}} {
		t.Run(kinds[0]+"x"+string(rune('0'+len(kinds))), func(t *testing.T) {
			paths := writeParts(t, t.TempDir(), split(trapTakeout(), 3), kinds...)
			tk := openTakeout(t, paths, Options{})
			drain(t, tk)
			assert.Equal(t, wantViews(), views(tk))
			assert.Equal(t, len(trapWant()), tk.Report.Originals)
			assert.Equal(t, 1, tk.Report.Live)
		})
	}
}
