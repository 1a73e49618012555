package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
)

// A nightly run finds the server gone while one saved file was deleted by
// hand: the outage is the same as any other, exit 75, not a fatal exit 1.
func TestAnOutageWhileRestoringALocallyDeletedFileExits75(t *testing.T) {
	_, u, proxy, e := loggedInBehindProxy(t)
	dir := t.TempDir()
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 200, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 200, Seed: 2})
	code, _, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, errOut)
	require.NoError(t, os.Remove(filepath.Join(dir, "Trip", "a.jpg")))
	proxy.stop()
	code, out, errOut := e.run("backup", "-q", dir)
	assert.Equal(t, exitTempFail, code, "stdout %q stderr %q", out, errOut)
	assert.Contains(t, errOut, "cannot be reached")
	requireRecordedTempFail(t, e, dir)
}

// The server goes away while --prune confirms deletions an earlier run
// saw: the run stops with exit 75 like any other outage, instead of
// retrying every mark in turn and ending "ok".
func TestAnOutageDuringPruneConfirmationsExits75(t *testing.T) {
	s, u, proxy, e := loggedInBehindProxy(t)
	dir := t.TempDir()
	a := u.AddAlbum("Trip")
	var files []*enteapitest.File
	for i := range 6 {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: string(rune('a'+i)) + ".jpg", Size: 200, Seed: byte(i + 1)}))
	}
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	for _, f := range files {
		a.Remove(f)
	}
	// An earlier run sees the deletions but refuses to prune them.
	require.Equal(t, exitOK, first(e.run("backup", "--prune", "--max-delete", "1", dir)))
	confirms := 0
	s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if strings.HasPrefix(route, "GET /collections/file") {
			if confirms++; confirms == 1 {
				go proxy.stop() // the server goes away as the confirmations start
			}
		}
		return enteapitest.Fault{}, false
	})
	code, out, errOut := e.run("backup", "--prune", dir)
	t.Logf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	assert.Equal(t, exitTempFail, code)
	requireRecordedTempFail(t, e, dir)
}

// The server goes away just after the album listing, while quak plans the
// run's disk space: the run stops after a few albums, not after every
// album's four attempts in turn.
func TestAnOutageWhilePlanningStopsAfterAFewAlbums(t *testing.T) {
	s, u, proxy, e := loggedInBehindProxy(t)
	dir := t.TempDir()
	const albums = 20
	for i := range albums {
		u.AddAlbum(fmt.Sprintf("Album %02d", i)).AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 200, Seed: byte(i + 1)})
	}
	var once sync.Once
	s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if strings.HasPrefix(route, "GET /collections/v2/diff") {
			once.Do(func() { go proxy.stop() })
		}
		return enteapitest.Fault{}, false
	})
	code, _, errOut := e.run("backup", "-v", dir)
	retries := strings.Count(errOut, "retrying")
	t.Logf("exit %d, %d retry lines\n%s", code, retries, errOut)
	assert.Equal(t, exitTempFail, code)
	assert.LessOrEqual(t, retries, 3*(backup.OutageAfter+1), "every album's listing was retried in turn before the run stopped")
}
