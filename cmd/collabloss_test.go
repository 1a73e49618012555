package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
)

// A collaborator's photo in the user's own album, saved by quak, then
// deleted by hand: museum refuses the account its entry (403), so quak
// cannot download it again. Every run fails it by name (exit 2) and records
// why, and status is not healthy, instead of a warning and a summary that
// counts it unchanged.
func TestALocallyDeletedCollaboratorFileIsFailedByNameEveryRun(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	bob := s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	mine := u.AddAlbum("Mine")
	mine.ShareWith(bob, "COLLABORATOR")
	collab := mine.AddFileBy(bob, enteapitest.FileSpec{Title: "collab.jpg", Size: 10, Seed: 2})
	require.Equal(t, exitOK, first(e.run("backup", "-q", dir)))
	saved := filepath.Join(dir, "Mine", "collab.jpg")
	require.NoError(t, os.Remove(saved))
	downloads := s.RequestsWithPrefix("GET /store/")
	const nights = 3
	for night := 1; night <= nights; night++ {
		code, _, errOut := e.run("backup", "-q", dir)
		assert.Equal(t, exitPartial, code, "night %d: a file left missing is a failure of the run", night)
		assert.Contains(t, errOut, fmt.Sprintf("quak: failed: Mine / collab.jpg (file %d): ", collab.ID))
		assert.Contains(t, errOut, "refuses this account its entry (403)")
		assert.NoFileExists(t, saved, "night %d", night)
		last, err := folder.At(dir).LastRun()
		require.NoError(t, err)
		assert.Equal(t, exitPartial, last.ExitCode)
		assert.Equal(t, 1, last.Counts.Failed)
		assert.Zero(t, last.Counts.Unchanged, "the missing file is not counted unchanged")
		require.Len(t, last.Failures, 1)
		assert.Equal(t, collab.ID, last.Failures[0].FileID)
		assert.Equal(t, backup.ReasonOther, last.Failures[0].Reason)
	}
	assert.Equal(t, nights, s.Requests("GET /collections/file"), "its entry is asked for once a run")
	assert.Equal(t, downloads, s.RequestsWithPrefix("GET /store/"), "never downloaded again")
	code, lines := statusOf(t, e, dir)
	assert.Equal(t, exitPartial, code, "status after a run that failed the file: %s", lines)
	assert.Contains(t, lines, "the last run ended")
}
