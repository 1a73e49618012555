package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// --concurrency takes 1 and more; anything below is a usage error that
// names the flag and its range, before a file is read.
func TestVerifyConcurrencyIsAtLeastOne(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	for _, bad := range []string{"0", "-1"} {
		code, out, errOut := e.run("verify", "--concurrency", bad, dir)
		assert.Equal(t, exitUsage, code, "--concurrency %s", bad)
		assert.Contains(t, errOut, "--concurrency must be at least 1", "--concurrency %s", bad)
		assert.Empty(t, out, "--concurrency %s", bad)
	}
	code, out, errOut := e.run("verify", "--concurrency", "1", dir)
	assert.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "1 of 1 file checked")
}

// What verify prints, problems and their order included, is the same
// with one file read at a time as with many.
func TestVerifyPrintsTheSameAtEveryConcurrency(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	for i := 0; i < 20; i++ {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%02d.jpg", i), Size: int64(100 + 50*i), Seed: byte(i)})
	}
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	for _, i := range []int{2, 9, 13, 17} {
		p := filepath.Join(dir, "A", fmt.Sprintf("%02d.jpg", i))
		require.NoError(t, os.WriteFile(p, []byte("not the photo"), 0o644))
	}
	require.NoError(t, os.Remove(filepath.Join(dir, "A", "05.jpg")))
	var problems [][]map[string]any
	var lines []string
	for _, n := range []string{"1", "8"} {
		code, out, errOut := e.run("verify", "--json", "--concurrency", n, dir)
		require.Equal(t, exitPartial, code, errOut)
		objs := ofType(jsonLinesOf(t, out), "problem")
		for _, o := range objs {
			delete(o, "time")
		}
		problems = append(problems, objs)
		lines = append(lines, errOut)
	}
	require.Len(t, problems[0], 5)
	assert.Equal(t, problems[0], problems[1])
	assert.Equal(t, lines[0], lines[1])
}
