package cmd

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// A run refused the folder's lock names who holds it, and status, which
// reads the refusal's record, names it too.
func TestALockRefusalNamesItsHolder(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	unlock, err := folder.At(dir).LockFor("verify")
	require.NoError(t, err)
	who := fmt.Sprintf("another quak run holds this folder: quak verify, process %d, since ", os.Getpid())
	for _, args := range [][]string{{"backup", dir}, {"verify", dir}} {
		code, _, errOut := e.run(args...)
		assert.Equal(t, exitLocked, code, errOut)
		assert.Contains(t, errOut, "quak: error: "+who, args)
	}
	unlock()
	code, lines := statusOf(t, e, dir)
	assert.Equal(t, exitPartial, code)
	assert.Contains(t, lines, "was refused before it started (exit code 4): "+who)
}
