package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Every line of --log-file names the command and the folder it is about,
// so one log shared by cron's backups and verifies, and by the folders
// of --all, tells them apart.
func TestLogLinesNameTheCommandAndFolder(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	fam.users["bob"].AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10, Seed: 2})
	fam.record(t, "alice")
	fam.record(t, "bob")
	log := filepath.Join(t.TempDir(), "quak.log")
	alice, bob := fam.dirs["alice"], fam.dirs["bob"]
	require.NoError(t, os.WriteFile(filepath.Join(bob, "B", "extra.jpg"), []byte("x"), 0o644))

	require.Equal(t, exitOK, first(fam.e.run("backup", "--log-file", log, alice)))
	require.Equal(t, exitOK, first(fam.e.run("status", "--offline", "--log-file", log, alice)))
	require.Equal(t, exitPartial, first(fam.e.run("verify", "--all", "--log-file", log)))
	require.Equal(t, exitOK, first(fam.e.run("backup", "--all", "--log-file", log)))
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	tags := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		_, rest, ok := strings.Cut(l, " [")
		require.True(t, ok, "no tag: %q", l)
		tag, msg, ok := strings.Cut(rest, "] ")
		require.True(t, ok, "no tag: %q", l)
		tags[tag] = append(tags[tag], msg)
	}
	has := func(tag, part string) {
		t.Helper()
		assert.Contains(t, strings.Join(tags[tag], "\n"), part, "[%s] in\n%s", tag, b)
	}
	has("backup "+alice, "0 new, 0 linked")
	has("status "+alice, "Backup:        "+alice)
	has("verify "+alice, "1 of 1 file checked")
	has("verify "+bob, "quak: extra: B/extra.jpg")
	has("verify --all", "Total for 2 of 2 folders: exit code 2")
	has("verify --all", "quak: error: 1 of 2 folders did not fully succeed")
	has("backup "+bob, "0 new, 0 linked")
	has("backup --all", "Total for 2 of 2 folders:")
}
