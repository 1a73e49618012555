package cmd

import (
	"fmt"
	"github.com/quak-photos/quak/download/compare"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// files is every file under dir with its size and time: what a read-only
// command must leave as it was.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		out[p] = fi.ModTime().String() + " " + fi.Mode().String() + " " + string(rune(fi.Size()))
		return nil
	}))
	return out
}

// status --server says how much of what the server holds the backup has,
// album by album, names the files missing on either side and why, turns
// unhealthy only for what the backup lost (not for what is new since its
// last run), and writes nothing in the folder.
func TestStatusServerComparesWithTheServer(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a, b := u.AddAlbum("A"), u.AddAlbum("B")
	a1 := a.AddFile(enteapitest.FileSpec{Title: "a1.jpg", Size: 10, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "a2.jpg", Size: 10, Seed: 2})
	b1 := b.AddFile(enteapitest.FileSpec{Title: "b1.jpg", Size: 10, Seed: 3})
	require.Equal(t, exitOK, first(e.run("backup", dir)))

	code, out, errOut := e.run("status", "--server", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "On the server: 3 files; the backup has 3 of them\n  A: 2 of 2\n  B: 1 of 1\nStatus:        healthy\n")

	require.NoError(t, os.Remove(filepath.Join(dir, "A", "a1.jpg")))
	c1 := u.AddAlbum("C").AddFile(enteapitest.FileSpec{Title: "c1.jpg", Size: 10, Seed: 4})
	b1.Trash()
	before := files(t, dir)
	code, out, errOut = e.run("status", "--server", dir)
	assert.Equal(t, exitPartial, code, out+errOut)
	assert.Contains(t, out, "On the server: 3 files; the backup has 1 of them\n  A: 1 of 2\n  B: 0 of 0, and 1 only here\n  C: 0 of 1\n")
	assert.Contains(t, out, "Missing here:  2 album entries the server lists that the backup lacks\n"+
		"  file "+itoa(a1.ID)+", A / a1.jpg: missing on disk\n"+
		"  file "+itoa(c1.ID)+", C / c1.jpg: new since the last run\n")
	assert.Contains(t, out, "Only here:     1 album entry the server no longer lists (the next run marks them deleted on the server; kept)\n"+
		"  file "+itoa(b1.ID)+", B / b1.jpg\n")
	assert.Contains(t, out, "Problem:       the backup lacks 1 of the 3 files the server holds\n")
	assert.Contains(t, errOut, "quak: error: backup not healthy: the backup lacks 1 of the 3 files the server holds")
	assert.Equal(t, before, files(t, dir), "status --server writes nothing in the folder")

	code, out, _ = e.run("status", "--server", "--json", dir)
	assert.Equal(t, exitPartial, code)
	st := ofType(jsonLinesOf(t, out), "status")
	require.Len(t, st, 1)
	server := st[0]["server"].(map[string]any)
	assert.EqualValues(t, 3, server["files"])
	assert.EqualValues(t, 1, server["backedUp"])
	assert.EqualValues(t, 1, server["lacking"])
	require.Len(t, server["missing"], 2)
	assert.Equal(t, map[string]any{"fileID": float64(a1.ID), "album": "A", "title": "a1.jpg", "why": "missing on disk"}, server["missing"].([]any)[0])
	assert.Len(t, server["onlyHere"], 1)
	assert.Len(t, server["albums"], 3)

	code, out, _ = e.run("status", dir)
	assert.Equal(t, exitOK, code, "without --server the server is not listed: %s", out)
	assert.NotContains(t, out, "On the server")

	require.Equal(t, exitOK, first(e.run("backup", dir)))
	code, out, errOut = e.run("status", "--server", dir)
	assert.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "On the server: 3 files; the backup has 3 of them\n  A: 2 of 2\n  B: 0 of 0\n  C: 1 of 1\n")

	st2, err := folder.At(dir).OpenState() // as a running backup holds it
	require.NoError(t, err)
	code, _, errOut = e.run("status", "--server", dir)
	require.NoError(t, st2.Close())
	assert.Equal(t, exitLocked, code, errOut)
	assert.Contains(t, errOut, "a backup is writing the folder's state; run quak status --server when it ends")

	code, _, _ = e.run("status", "--server", "--offline", dir)
	assert.Equal(t, exitUsage, code)
}

// Files the backup never had, and is not about to get, count as lacking;
// the public link's folder is compared with the link's album.
func TestStatusServerOnALinkAndWhatTheBackupNeverHad(t *testing.T) {
	e, s, a, dir := linkSetup(t)
	l := a.ShareLink(enteapitest.LinkOptions{})
	require.Equal(t, exitOK, first(e.run("backup", "--link-file", linkFile(t, l), "--endpoint", s.URL(), dir)))
	code, out, errOut := e.run("status", "--server", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "On the server: 2 files; the backup has 2 of them\n  Grandma: 2 of 2\n")

	a.AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 100, Seed: 3})
	code, out, _ = e.run("status", "--server", dir)
	require.Equal(t, exitOK, code, "what is new since the last run is no loss: %s", out)
	assert.Contains(t, out, ", Grandma / c.jpg: new since the last run\n")

	// A listing that went past c.jpg without it (a state that lost its
	// record, say): the backup lacks it.
	st, err := folder.At(dir).OpenState()
	require.NoError(t, err)
	colls, err := st.Collections()
	require.NoError(t, err)
	require.Len(t, colls, 1)
	for _, c := range colls {
		c.Cursor += time.Hour.Microseconds()
		require.NoError(t, st.PutCollection(c))
	}
	require.NoError(t, st.Close())
	code, out, errOut = e.run("status", "--server", dir)
	assert.Equal(t, exitPartial, code, out+errOut)
	assert.Contains(t, out, ", Grandma / c.jpg: not in the backup\n")
	assert.True(t, strings.Contains(out, "Problem:       the backup lacks 1 of the 3 files the server holds"), out)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A file the last run failed is "failing", one its filters left out is
// "left out by the filters", and an album they left out is named as not in
// the backup: each counts as lacking, not as new.
func TestStatusServerSaysWhyAFileIsNotThere(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Size: 10, Seed: 1})
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 10, Seed: 2})
	a.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 10, Seed: 3})
	u.AddAlbum("Other").AddFile(enteapitest.FileSpec{Title: "o.jpg", Size: 10, Seed: 4})
	s.Advance(time.Hour) // the files above are older than a listing's overlap behind the next
	a.AddFile(enteapitest.FileSpec{Title: "later.jpg", Size: 10, Seed: 5})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(3), 5)...)
	require.Equal(t, exitPartial, first(e.run("backup", "--skip-videos", "--albums", "A", dir)))

	code, out, errOut := e.run("status", "--server", dir)
	assert.Equal(t, exitStale, code, "no run fully succeeded yet: "+out+errOut)
	assert.Contains(t, out, "On the server: 5 files; the backup has 2 of them\n  A: 2 of 4\n  Other: 0 of 1\n")
	assert.Contains(t, out, ", A / bad.jpg: failing\n")
	assert.Contains(t, out, ", A / clip.mp4: left out by the filters\n")
	assert.Contains(t, out, ", Other / o.jpg: its album is not in the backup\n")
	assert.Contains(t, out, "Problem:       the backup lacks 3 of the 5 files the server holds\n")
}

// Long lists stop at 20 lines and say how many more --json gives.
func TestStatusListsStopAtTwenty(t *testing.T) {
	var damaged []folder.Damage
	var files []compare.File
	for i := range 25 {
		damaged = append(damaged, folder.Damage{FileID: int64(i), Kind: "missing", Path: fmt.Sprintf("A/%d.jpg", i)})
		files = append(files, compare.File{ID: int64(i), Album: "A", Title: fmt.Sprintf("%d.jpg", i), Why: compare.WhyGone})
	}
	var b strings.Builder
	writeDamaged(&b, damaged[:20])
	assert.Equal(t, 21, strings.Count(b.String(), "\n"), "twenty, all of them")
	assert.NotContains(t, b.String(), "more")
	b.Reset()
	writeDamaged(&b, damaged)
	assert.Equal(t, 22, strings.Count(b.String(), "\n"))
	assert.Contains(t, b.String(), "  file 19, A/19.jpg: missing\n  … and 5 more (quak status --json lists them)\n")
	b.Reset()
	writeFiles(&b, files[:20], true)
	assert.Equal(t, 20, strings.Count(b.String(), "\n"))
	b.Reset()
	writeFiles(&b, files, false)
	assert.Equal(t, 21, strings.Count(b.String(), "\n"))
	assert.Contains(t, b.String(), "  file 19, A / 19.jpg\n  … and 5 more (quak status --server --json lists them)\n")
}

// A server that cannot be reached to compare with is exit 75, after the
// status was printed.
func TestStatusServerOnAServerAway(t *testing.T) {
	_, u, proxy, e := loggedInBehindProxy(t)
	dir := filepath.Join(t.TempDir(), "backup")
	require.NoError(t, os.Mkdir(dir, 0o755))
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	proxy.stop()
	code, out, errOut := e.run("status", "--server", dir)
	assert.Equal(t, exitTempFail, code, out+errOut)
	assert.Contains(t, out, "Backup:        "+dir)
	assert.Contains(t, errOut, "the server cannot be reached")
}
