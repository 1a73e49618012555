package cmd

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A quiet run that succeeds says nothing, unless files were deleted on
// the server since the last run: that, cron mails. Status's last-run line
// counts them too.
func TestAQuietRunSaysWhatWasDeletedOnTheServer(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	code, out, errOut := e.run("backup", "-q", dir)
	require.Equal(t, exitOK, code)
	require.Empty(t, out+errOut)

	x.Trash()
	code, out, errOut = e.run("backup", "-q", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Empty(t, errOut)
	assert.Regexp(t, `^quak: 1 file deleted on the server since the last run of `+dir+`: 0 new, .*, 1 deleted on server; .*\n$`, out)

	code, out, _ = e.run("status", "--offline", dir)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, ", 0 failed, 1 deleted on server (exit code 0)")

	code, out, errOut = e.run("backup", "-q", dir)
	require.Equal(t, exitOK, code)
	assert.Empty(t, out+errOut, "nothing new deleted: nothing said")

	z := a.AddFile(enteapitest.FileSpec{Title: "z.jpg", Size: 10, Seed: 3})
	require.Equal(t, exitOK, first(e.run("backup", "-q", dir)))
	z.Trash()
	code, out, errOut = e.run("backup", "-q", "--json", dir)
	require.Equal(t, exitOK, code)
	assert.Empty(t, errOut)
	assert.NotContains(t, out, "quak: ", "--json says it in its summary")
	assert.Len(t, ofType(jsonLinesOf(t, out), "deleted-on-server"), 1)
}
