package cmd

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// With several accounts, a folder's account comes from --account, then from
// the config's record of the folder, then from the backup in it; with none
// of those quak asks which account rather than guessing.
func TestBackupPicksTheFoldersAccount(t *testing.T) {
	fam := newFamily(t, "alice", "carol")
	e := fam.e
	fam.users["carol"].AddAlbum("C").AddFile(enteapitest.FileSpec{Title: "c.jpg", Size: 10})
	fam.record(t, "carol")

	fresh := filepath.Join(t.TempDir(), "fresh")
	code, _, errOut := e.run("backup", "--init", fresh)
	require.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--account")
	_, err := os.Stat(fresh)
	assert.True(t, os.IsNotExist(err), "nothing is made before the account is known")

	// Recorded: no --account needed.
	f := fam.users["carol"].AddAlbum("D").AddFile(enteapitest.FileSpec{Title: "d.jpg", Size: 10})
	code, out, errOut := e.run("backup", fam.dirs["carol"])
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	requireFile(t, filepath.Join(fam.dirs["carol"], "D", "d.jpg"), f.Plaintext())

	// Forgotten by the config, the backup in the folder still names carol.
	code, out, errOut = e.run("accounts", "--forget", fam.dirs["carol"])
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Equal(t, "Forgot "+fam.dirs["carol"]+"; its files stay.\n", out)
	code, _, _ = e.run("accounts", "--forget", fam.dirs["carol"])
	require.Equal(t, exitUsage, code, "not in the list any more")
	g := fam.users["carol"].AddAlbum("E").AddFile(enteapitest.FileSpec{Title: "e.jpg", Size: 10})
	code, out, errOut = e.run("backup", fam.dirs["carol"])
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	requireFile(t, filepath.Join(fam.dirs["carol"], "E", "e.jpg"), g.Plaintext())
	// While a backup holds the state, status still finds the account, in
	// the last run's record.
	st, err := folder.At(fam.dirs["carol"]).OpenState()
	require.NoError(t, err)
	code, out, errOut = e.run("status", fam.dirs["carol"])
	require.NoError(t, st.Close())
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Contains(t, out, "Session:       valid")
	// The backup recorded the folder again: --all takes it; forgotten
	// once more, --all has nothing to do.
	code, _, errOut = e.run("backup", "--all")
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = e.run("accounts", "--forget", fam.dirs["carol"])
	require.Equal(t, exitOK, code, errOut)
	code, _, errOut = e.run("backup", "--all")
	require.Equal(t, exitUsage, code, "nothing recorded any more")
	assert.Contains(t, errOut, "--init --account")

	// --account for another account's folder: the backup refuses it.
	code, _, errOut = e.run("backup", "--account", fam.users["alice"].Email, fam.dirs["carol"])
	require.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "is the backup of carol@example.org on "+fam.s.URL()+" (user ")
	assert.Contains(t, errOut, "not of alice@example.org on "+fam.s.URL()+" (user ")

	// An account that is not logged in.
	code, _, errOut = e.run("backup", "--account", "nobody@example.org", fam.dirs["carol"])
	require.Equal(t, exitLogin, code, errOut)
}

// Issue 31: a run refused because DIR is another account's backup changes
// nothing but its own refusal record: the folder stays recorded as its
// owner's, its last run still names the owner, and the owner's next run
// (by hand or --all) succeeds.
func TestARefusedRunLeavesTheFoldersRecordsAlone(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	fam.record(t, "alice")
	alice := fam.dirs["alice"]
	folders, err := os.ReadFile(filepath.Join(fam.e.vars["QUAK_CONFIG_DIR"], "folders.json"))
	require.NoError(t, err)

	code, _, errOut := fam.e.run("backup", "--account", "bob@example.org", alice)
	require.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "is the backup of alice@example.org on "+fam.s.URL())
	assert.NotContains(t, errOut, "FAILED", "a refused run prints only its error")

	after, err := os.ReadFile(filepath.Join(fam.e.vars["QUAK_CONFIG_DIR"], "folders.json"))
	require.NoError(t, err)
	assert.Equal(t, string(folders), string(after), "folders.json still says whose the folder is")
	last, err := folder.At(alice).LastRun()
	require.NoError(t, err)
	assert.Equal(t, "alice@example.org", last.Email)
	refusal, err := folder.At(alice).LastRefusal()
	require.NoError(t, err)
	assert.Equal(t, exitUnusableDir, refusal.ExitCode)

	code, _, errOut = fam.e.run("backup", alice)
	assert.Equal(t, exitOK, code, errOut)
	code, _, errOut = fam.e.run("backup", "--all")
	assert.Equal(t, exitOK, code, errOut)
}

// Issue 31: six `backup --init --account` at once, as a script setting up a
// family's folders might run them, each register their folder: none is
// lost from folders.json, and --all then backs up all six.
func TestFoldersInitialisedAtOnceAreAllRegistered(t *testing.T) {
	bin := buildQuak(t)
	fam := newFamily(t, "alice")
	fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	root := t.TempDir()
	const n = 6
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command(bin, "backup", "--init", "--account", "alice@example.org", filepath.Join(root, fmt.Sprint(i)))
		cmds[i].Env = append(os.Environ(), "QUAK_CONFIG_DIR="+fam.e.vars["QUAK_CONFIG_DIR"])
		require.NoError(t, cmds[i].Start())
	}
	for i, c := range cmds {
		require.NoError(t, c.Wait(), "run %d", i)
	}
	b, err := os.ReadFile(filepath.Join(fam.e.vars["QUAK_CONFIG_DIR"], "folders.json"))
	require.NoError(t, err)
	for i := range n {
		assert.Contains(t, string(b), filepath.Join(root, fmt.Sprint(i)))
	}
	code, out, errOut := fam.e.run("backup", "--all", "--json")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, n, strings.Count(out, `"type":"summary"`), "one summary a folder")
}

// Issue 31: a first backup into the folder that holds a family's backups,
// or into one's album folder (a dry run too), is refused with exit 5,
// naming what is there, and makes nothing; --allow-nested insists.
func TestABackupInsideOrAboveAnotherIsRefused(t *testing.T) {
	fam := newFamily(t, "alice", "carol")
	for _, n := range []string{"alice", "carol"} {
		fam.users[n].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: n + ".jpg", Size: 10, Seed: 1})
		fam.record(t, n)
	}
	photos := filepath.Dir(fam.dirs["alice"])
	code, _, errOut := fam.e.run("backup", "--account", "alice@example.org", photos)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "holds other backups ("+fam.dirs["alice"]+", "+fam.dirs["carol"]+")")
	assert.Contains(t, errOut, "quak: hint: give one of them as DIR, or pass --allow-nested")
	assert.NoDirExists(t, filepath.Join(photos, folder.StateDir), "nothing made in a folder refused")

	album := filepath.Join(fam.dirs["alice"], "A")
	code, _, errOut = fam.e.run("backup", "--dry-run", "--account", "alice@example.org", album)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "is inside the backup "+fam.dirs["alice"])
	assert.Equal(t, 1, strings.Count(errOut, "quak: hint:"), errOut)

	code, _, errOut = fam.e.run("backup", "--allow-nested", "--account", "alice@example.org", photos)
	assert.Equal(t, exitOK, code, errOut)
	code, _, errOut = fam.e.run("backup", "--account", "alice@example.org", photos)
	assert.Equal(t, exitOK, code, "a nested backup made on purpose is what it is: %s", errOut)
}

// Issue 31: a folder backed up without --init or --account (one account
// logged in then) is recorded as the account's, so the nightly --all takes
// it once a second account is added.
func TestEveryBackedUpFolderIsRecordedForAll(t *testing.T) {
	fam := newFamily(t, "alice")
	fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	dir := t.TempDir()
	code, _, errOut := fam.e.run("backup", dir)
	require.Equal(t, exitOK, code, errOut)
	fam.users["bob"] = fam.s.AddUser("bob@example.org", "bob password", enteapitest.UserOptions{})
	fam.dirs["bob"] = filepath.Join(t.TempDir(), "bob")
	fam.login(t, "bob")
	fam.users["bob"].AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10, Seed: 2})
	fam.record(t, "bob")
	code, out, errOut := fam.e.run("backup", "--all", "--json")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, dir, "alice's folder is in the nightly run")
	assert.Equal(t, 2, strings.Count(out, `"type":"summary"`))
}
