package state

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/catalog"
)

// mappedKiB is how much of the file at path is resident in this process's
// memory, from /proc/self/smaps.
func mappedKiB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer func() { _ = f.Close() }()
	total, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if fields := strings.Fields(line); len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = fields[len(fields)-1] == path // a mapping's first line
			continue
		}
		var kb int
		if in && strings.HasPrefix(line, "Rss:") {
			_, err := fmt.Sscanf(line, "Rss: %d kB", &kb)
			require.NoError(t, err)
			total += kb
		}
	}
	require.NoError(t, sc.Err())
	return total
}

func TestAPassOverEveryFileDoesNotStayInMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	s, err := Open(path)
	require.NoError(t, err)
	defer func() { _ = s.Close() }()
	const n = 20000 // about 8 MB of records
	for i := 0; i < n; i += 5000 {
		batch := make([]*File, 0, 5000)
		for j := i; j < i+5000; j++ {
			title := fmt.Sprintf("IMG_%05d.jpg", j)
			batch = append(batch, &File{ID: int64(j + 1), Status: Saved, Size: 1000, Header: strings.Repeat("h", 32),
				Meta: catalog.Meta{Title: title, Hash: strings.Repeat("x", 88), CreationTime: 1700000000000000}, LocalHash: strings.Repeat("x", 88),
				Entries: map[int64]*Entry{7: {Name: title, Parts: []string{title}, Meta: catalog.Meta{Title: title}}}})
		}
		require.NoError(t, s.Commit(batch, nil))
	}
	seen, peak := 0, 0
	require.NoError(t, s.Files(func(*File) error {
		if seen++; seen%2000 == 0 {
			peak = max(peak, mappedKiB(t, path))
		}
		return nil
	}))
	require.Equal(t, n, seen)
	after := mappedKiB(t, path)
	require.Less(t, peak, 4096, "the pages of the records read are let go as the pass goes")
	require.Less(t, after, 256, "and all of them once it ends")
	briefs := 0
	require.NoError(t, s.Briefs(func(Brief) error { briefs++; return nil }))
	require.Equal(t, n, briefs)
	require.Less(t, mappedKiB(t, path), 256, "nor do the briefs' pages")
}
