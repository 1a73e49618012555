package cmd

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A collaborator's photo in the user's own album, saved by quak, then
// deleted locally: it is restored like any other, or, while museum refuses
// the account its entry (403), every run fails it by name and status is
// not healthy, instead of a warning and a summary that counts it unchanged.
func TestALocallyDeletedCollaboratorFileIsRestoredOrReportedAsFailed(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	bob := s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	mine := u.AddAlbum("Mine")
	mine.ShareWith(bob, "COLLABORATOR")
	collab := mine.AddFileBy(bob, enteapitest.FileSpec{Title: "collab.jpg", Size: 10, Seed: 2})
	require.Equal(t, exitOK, first(e.run("backup", "-q", dir)))
	require.NoError(t, os.Remove(filepath.Join(dir, "Mine", "collab.jpg")))
	for night := 1; night <= 3; night++ {
		code, out, errOut := e.run("backup", "-q", dir)
		t.Logf("night %d: exit %d stdout %q stderr %q", night, code, out, errOut)
		if b, err := os.ReadFile(filepath.Join(dir, "Mine", "collab.jpg")); err == nil {
			assert.Equal(t, collab.Plaintext(), b)
			return
		}
		assert.Equal(t, exitPartial, code, "a file left missing is a failure of the run, not a success")
		assert.Contains(t, errOut, "collab.jpg")
		if night == 3 {
			code, lines := statusOf(t, e, dir)
			assert.NotEqual(t, exitOK, code, "the file has been missing for 3 nights, but status says: %s", lines)
			t.Log("the collaborator's file is not restored, but reported")
		}
	}
}
