package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/restore"
)

func TestPluralCountsOneAndMany(t *testing.T) {
	assert.Equal(t, "1 file", plural(1, "file"))
	assert.Equal(t, "0 files", plural(0, "file"))
	assert.Equal(t, "2 files", plural(2, "file"))
	assert.Equal(t, "1 hash mismatch", plural(1, "hash mismatch", "hash mismatches"))
	assert.Equal(t, "3 hash mismatches", plural(3, "hash mismatch", "hash mismatches"))
}

// A run of one of everything says each in the singular.
func TestASummaryOfOneSaysItInTheSingular(t *testing.T) {
	line := summaryLine(&backup.Summary{Saved: backup.Saved{New: 1, Updated: 1, HashMismatches: 1},
		Albums: backup.Albums{AlbumsDeleted: 1, AlbumsFailed: 1}})
	assert.Contains(t, line, "1 metadata update, ")
	assert.Contains(t, line, ", 1 hash mismatch, 1 album deleted, 1 album failed")
	line = summaryLine(&backup.Summary{Saved: backup.Saved{Updated: 2, HashMismatches: 2}, Albums: backup.Albums{AlbumsDeleted: 2}})
	assert.Contains(t, line, "2 metadata updates, ")
	assert.Contains(t, line, ", 2 hash mismatches, 2 albums deleted, 0 albums failed")
}

// A restore's and an import's summary say each count in the singular
// when it is 1, and the thousands apart as docs/import.md shows them.
func TestARestoreSummaryOfOneSaysItInTheSingular(t *testing.T) {
	assert.Equal(t, "1 of 1 file", ofFiles(1, 1))
	assert.Equal(t, "0 of 1 file", ofFiles(0, 1))
	assert.Equal(t, "12,480 of 12,480 files", ofFiles(12480, 12480))
	assert.Equal(t, "1 already there, 1 album addition, 1 album created", albumWork(&restore.Summary{Present: 1, Added: 1, AlbumsCreated: 1}))
	assert.Equal(t, "1,200 already there, 3,902 album additions, 0 albums created", albumWork(&restore.Summary{Present: 1200, Added: 3902}))
	assert.Equal(t, "gets", agreeing(1, "gets", "get"))
	assert.Equal(t, "get", agreeing(0, "gets", "get"))
	assert.Equal(t, "get", agreeing(2, "gets", "get"))
}

// Only the commands that have --albums speak of its patterns under exit
// code 64, and the network flags speak of answers, not of downloads.
func TestHelpSaysOnlyWhatTheCommandHas(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		albums bool
	}{
		{[]string{"backup"}, true},
		{[]string{"helper", "fix-missing-thumbnails"}, true},
		{[]string{"status"}, false},
		{[]string{"restore"}, true},
		{[]string{"verify"}, false},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, _ := newEnv(t).run(append(tc.args, "--help")...)
			require.Equal(t, exitOK, code)
			i := strings.Index(out, "    64")
			require.GreaterOrEqual(t, i, 0, out)
			line := out[i : i+strings.IndexByte(out[i:], '\n')]
			assert.Equal(t, tc.albums, strings.Contains(line, "--albums"), line)
			assert.Contains(t, line, "bad command line")
			assert.NotContains(t, out, "a download that sends no byte")
		})
	}
	code, out, _ := newEnv(t).run("--help")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, albumsUsageHelp, "the whole table says every meaning")
}

// A dry run that stops (here: refused for want of space) says what it
// found before it stopped, not what a real run "would make".
func TestARefusedDryRunDoesNotSayWhatARunWouldMake(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 20 << 20})
	e.freeSpace = func(string) (int64, error) { return 1 << 20, nil }
	code, out, errOut := e.run("backup", "--dry-run", dir)
	require.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, out, "FAILED (exit code 5): Dry run, nothing written; before it stopped it found: ")
	assert.NotContains(t, out, "would make")

	e.freeSpace = nil
	code, out, _ = e.run("backup", "--dry-run", "--no-space-check", dir)
	require.Equal(t, exitOK, code)
	assert.True(t, strings.HasPrefix(out, "Dry run, nothing written; a real run would make: 1 new"), out)
}

// A restore given a folder of a backup says what that folder is, and one
// given the folder above a backup or export names it.
func TestRestoreSaysWhatAFolderIs(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "one.jpg", Data: enteapitest.FakeJPEG("one")})
	require.Equal(t, exitOK, first(e.run("backup", "--date-view", "YYYY", dir)))
	bob := s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	require.Equal(t, exitOK, first(e.run("login", "--email", bob.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, bob.Password, 0o600))))
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	for part, what := range map[string]string{
		folder.StateDir:    "it is quak's own folder of " + abs,
		backup.DateViewDir: "it is the date view of " + abs,
		"Trip":             "it is an album folder of " + abs,
	} {
		code, _, errOut := e.run("restore", "--account", bob.Email, "--dry-run", filepath.Join(dir, part))
		assert.Equal(t, exitUnusableDir, code, errOut)
		assert.Contains(t, errOut, what+": restore that folder", part)
	}

	parent := filepath.Join(t.TempDir(), "parent2")
	export := filepath.Join(parent, "disk", "ente-export")
	require.NoError(t, os.MkdirAll(filepath.Dir(export), 0o755))
	require.NoError(t, os.Rename(dir, export))
	code, _, errOut := e.run("restore", "--account", bob.Email, "--dry-run", parent)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "quak: hint: "+export+" looks like one: run `quak restore "+export+"`\n")

	require.NoError(t, os.RemoveAll(filepath.Join(export, folder.StateDir)))
	code, _, errOut = e.run("restore", "--account", bob.Email, "--dry-run", parent)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "quak: hint: "+export+" looks like one", "an export without .quak too")

	other := filepath.Join(parent, "other")
	require.NoError(t, os.MkdirAll(filepath.Join(other, "A", ".meta"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "A", ".meta", "album_meta.json"), []byte("{}"), 0o644))
	code, _, errOut = e.run("restore", "--account", bob.Email, "--dry-run", parent)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "quak: hint: "+export+", "+other+" look like ones: restore each with `quak restore DIR`\n")

	code, _, errOut = e.run("restore", "--account", bob.Email, "--dry-run", t.TempDir())
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.NotContains(t, errOut, "quak: hint:", "nothing below: no hint")
}

func TestCountedPutsCommasBetweenThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12405: "12,405", 1234567: "1,234,567", -1234567: "-1,234,567", -12: "-12"} {
		assert.Equal(t, want, counted(n))
	}
	assert.Equal(t, "12,405 files", plural(12405, "file"))
}
