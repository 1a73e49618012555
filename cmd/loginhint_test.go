package cmd

import (
	"github.com/quak-photos/quak/download/folder"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// From cron, "not logged in" names the folder's account and server, so
// the login to run can be copied as it is: no session at all, no session
// for that account, or one its server no longer accepts.
func TestNotLoggedInNamesTheFoldersAccountAndServer(t *testing.T) {
	fam := newFamily(t, "alice", "carol")
	carol := fam.users["carol"]
	carol.AddAlbum("C").AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 10, Seed: 1})
	fam.record(t, "carol")
	dir := fam.dirs["carol"]
	login := "quak: hint: run `quak login --email carol@example.org --endpoint " + fam.s.URL() + "`\n"

	carol.RevokeSessions()
	for _, args := range [][]string{{"backup", dir}, {"status", dir}} {
		code, _, errOut := fam.e.run(args...)
		assert.Equal(t, exitLogin, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, login, "rejected by its server: %v", args)
	}

	require.Equal(t, exitOK, first(fam.e.run("logout", "--account", carol.Email)))
	for _, args := range [][]string{{"backup", dir}, {"status", dir}, {"helper", "fix-missing-thumbnails", "--from", dir}} {
		code, _, errOut := fam.e.run(args...)
		assert.Equal(t, exitLogin, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, login, "another account is logged in: %v", args)
	}

	require.Equal(t, exitOK, first(fam.e.run("logout", "--account", fam.users["alice"].Email)))
	_, err := os.Stat(fam.e.sessionFile())
	require.True(t, os.IsNotExist(err), "no session left")
	code, _, errOut := fam.e.run("backup", dir)
	assert.Equal(t, exitLogin, code, errOut)
	assert.Contains(t, errOut, login, "no session at all")

	require.Equal(t, exitOK, first(fam.e.run("accounts", "--forget", dir)))
	code, _, errOut = fam.e.run("backup", dir)
	assert.Equal(t, exitLogin, code, errOut)
	assert.Contains(t, errOut, login, "the backup in the folder names its account when the config does not")
}

// With no session at all, a folder whose state a backup holds is still
// "not logged in", not a lock held.
func TestNoSessionAndABusyStateIsNotLoggedIn(t *testing.T) {
	fam := newFamily(t, "alice")
	fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	fam.record(t, "alice")
	dir := fam.dirs["alice"]
	require.Equal(t, exitOK, first(fam.e.run("logout")))
	require.Equal(t, exitOK, first(fam.e.run("accounts", "--forget", dir)))
	require.NoError(t, os.Remove(folder.At(dir).LastRunPath())) // the record status and others read first
	st, err := folder.At(dir).OpenState()
	require.NoError(t, err)
	defer func() { require.NoError(t, st.Close()) }()
	code, _, errOut := fam.e.run("helper", "fix-missing-thumbnails", "--from", dir)
	assert.Equal(t, exitLogin, code, errOut)
	assert.Contains(t, errOut, "quak: hint: run `quak login`\n", "nothing names the account: the state cannot be read")
}
