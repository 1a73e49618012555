package backup

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// visibilityIn is the "visibility" a sidecar says ("" when it has none).
func (e *env) visibilityIn(rel string) string {
	e.t.Helper()
	var sc map[string]any
	require.NoError(e.t, json.Unmarshal(e.read(rel), &sc))
	v, _ := sc["visibility"].(string)
	return v
}

// A file archived or hidden on its own says so in its sidecar, in every
// album, and a change of it on the server is applied without a download.
func TestAFilesOwnVisibilityIsInItsSidecarAndFollowsTheServer(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Trip")
	b := e.u.AddAlbum("Best")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	b.Add(f)
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	f.SetVisibility(1)
	e.mustRun()
	assert.Equal(t, "archived", e.visibilityIn("Trip/.meta/x.jpg.json"))
	assert.Equal(t, "archived", e.visibilityIn("Best/.meta/x.jpg.json"))
	assert.Empty(t, e.visibilityIn("Trip/.meta/y.jpg.json"), "a visible file has no key")
	assert.NotContains(t, string(e.read("Trip/.meta/y.jpg.json")), "visibility")

	downloads := e.downloads()
	f.SetVisibility(2)
	sum := e.mustRun()
	assert.Equal(t, 2, sum.Updated, "one update for each album's copy")
	assert.Equal(t, downloads, e.downloads(), "nothing downloaded")
	assert.Equal(t, "hidden", e.visibilityIn("Trip/.meta/x.jpg.json"))
	assert.Equal(t, "hidden", e.visibilityIn("Best/.meta/x.jpg.json"))

	f.SetVisibility(0)
	e.mustRun()
	assert.Empty(t, e.visibilityIn("Trip/.meta/x.jpg.json"), "shown again")
}

// Only a file's owner sees its own visibility: a sharee's backup says
// nothing of it.
func TestASharedFilesVisibilityIsItsOwnersAlone(t *testing.T) {
	e := newEnv(t)
	owner := e.s.AddUser("owner@example.org", "pw", enteapitest.UserOptions{})
	shared := owner.AddAlbum("Theirs")
	f := shared.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	f.SetVisibility(1)
	shared.ShareWith(e.u, "VIEWER")
	e.mustRun()
	assert.Empty(t, e.visibilityIn("Theirs/.meta/x.jpg.json"))
}
