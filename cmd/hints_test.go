package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hints is the hint lines of stderr.
func hints(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "quak: hint: ") {
			out = append(out, strings.TrimPrefix(l, "quak: hint: "))
		}
	}
	return out
}

// A refused backup --all says what to do once, under the folder's own
// error; the line that sums the folders up adds no second hint.
func TestRefusedBackupAllGivesOneHint(t *testing.T) {
	fam := newFamily(t, "alice")
	fam.record(t, "alice")
	unlock, err := folder.At(fam.dirs["alice"]).Lock()
	require.NoError(t, err)
	defer unlock()
	code, _, errOut := fam.e.run("backup", "--all")
	require.Equal(t, exitLocked, code, errOut)
	assert.Equal(t, []string{"wait for the other run to finish; the lock goes away with it"}, hints(errOut), errOut)
	assert.Contains(t, errOut, "quak: error: 1 of 1 folder did not fully succeed (exit code 4, the worst of their codes)\n")
}

// An error that says what to do gets that hint alone, never the generic
// pointer to --help as well.
func TestAnErrorWithItsOwnHintGetsNoOther(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"backup", "--all"}, "run `quak backup --init --account EMAIL DIR` once for each folder"},
		{[]string{"backup", "--all", "--init"}, "run `quak backup --init --account EMAIL DIR` once for each folder"},
		{[]string{"whoami"}, "say which with --account EMAIL; `quak accounts` lists them"},
		{[]string{"accounts", "--forget", t.TempDir()}, "`quak accounts` lists the folders recorded"},
	} {
		code, _, errOut := fam.e.run(tc.args...)
		assert.Equal(t, exitUsage, code, "%v: %s", tc.args, errOut)
		assert.Equal(t, []string{tc.hint}, hints(errOut), "%v", tc.args)
	}
}

// A numeric flag out of range is named, with the range it takes, and no
// other flag is blamed.
func TestOutOfRangeFlagsAreNamed(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	for _, tc := range []struct{ flag, value, want string }{
		{"--concurrency", "-1", "--concurrency must be at least 0, not -1"},
		{"--attempts", "0", "--attempts must be at least 1, not 0"},
		{"--max-delete", "0", "--max-delete must be at least 1, not 0"},
		{"--streams", "0", "--streams must be from 1 to 16, not 0"},
		{"--streams", "17", "--streams must be from 1 to 16, not 17"},
	} {
		code, _, errOut := e.run("backup", tc.flag, tc.value, dir)
		assert.Equal(t, exitUsage, code, errOut)
		assert.Equal(t, "quak: error: "+tc.want+"\nquak: hint: run `quak backup --help`\n", errOut)
	}
	code, _, errOut := e.run("helper", "fix-missing-thumbnails", "--limit", "-2")
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "quak: error: --limit must be at least 0, not -2\n")
	for _, tc := range []struct{ value, want string }{
		{"0", "--concurrency must be from 1 to 16, not 0"},
		{"17", "--concurrency must be from 1 to 16, not 17"},
		{"1", "holds no quak backup"},
		{"16", "holds no quak backup"},
	} {
		_, _, errOut := e.run("restore", "--concurrency", tc.value, dir)
		assert.Contains(t, errOut, tc.want, "restore --concurrency %s", tc.value)
	}
}

// A mistyped flag gets the flags it may have meant, as a mistyped command
// does, and nothing else.
func TestMistypedFlagSuggests(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backup", "--dryrun", dir}, "did you mean --dry-run?"},
		{[]string{"backup", "--concurency", "4", dir}, "did you mean --concurrency?"},
		{[]string{"status", "--ofline", dir}, "did you mean --offline?"},
		{[]string{"verify", "--quite", dir}, "did you mean --quiet?"},
		{[]string{"backup", "--xyzzy", dir}, "run `quak backup --help`"},
	} {
		code, _, errOut := e.run(tc.args...)
		assert.Equal(t, exitUsage, code, errOut)
		assert.Contains(t, errOut, "quak: error: unknown flag: "+tc.args[1]+"\n", tc.args)
		assert.Equal(t, []string{tc.want}, hints(errOut), "%v", tc.args)
	}
}

// A run of --all in which no folder started prints no counts: zeros would
// read like an empty success. Each folder's line says it was refused.
func TestBackupAllWithNothingStartedPrintsNoCounts(t *testing.T) {
	fam := newFamily(t, "alice")
	fam.record(t, "alice")
	require.NoError(t, os.RemoveAll(fam.dirs["alice"]))
	code, out, errOut := fam.e.run("backup", "--all")
	require.Equal(t, exitUnusableDir, code, errOut)
	assert.NotContains(t, out, "0 new")
	assert.Contains(t, out, "exit code 5: refused before it started: backup folder "+fam.dirs["alice"]+" does not exist")
	assert.Contains(t, out, "FAILED (exit code 5): Total for 1 of 1 folder: every one was refused before it started; exit code 5\n")
}

// quak status without a folder says how to name one.
func TestStatusWithoutAFolderSaysHowToNameOne(t *testing.T) {
	code, _, errOut := newEnv(t).run("status")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "quak: error: no backup folder given\n"+
		"quak: hint: run `quak status DIR`, or `quak status --all` for every folder quak backup recorded\n", errOut)
}

// A folder that is not there is named as such before anything about
// accounts: not logged in, or several accounts to choose from.
func TestAMissingFolderComesBeforeAccounts(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "Photoz")
	want := "quak: error: backup folder " + missing + " does not exist"
	code, _, errOut := newEnv(t).run("status", missing)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Equal(t, want+"\nquak: hint: is the disk mounted?\n", errOut)

	fam := newFamily(t, "alice", "bob")
	for _, args := range [][]string{{"backup", missing}, {"status", missing}, {"helper", "fix-missing-thumbnails", "--from", missing}} {
		code, _, errOut := fam.e.run(args...)
		assert.Equal(t, exitUnusableDir, code, "%v: %s", args, errOut)
		assert.True(t, strings.HasPrefix(errOut, want), "%v: %s", args, errOut)
		assert.NotContains(t, errOut, "--account", args)
	}
}

// The advice that was built into the packages' errors is chosen here, one
// hint each: a missing folder, too little space, a secret file others can
// read, a server out of reach.
func TestAdviceComesAsTheErrorsOneHint(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	missing := filepath.Join(t.TempDir(), "disk")
	code, _, errOut := e.run("backup", missing)
	assert.Equal(t, exitUnusableDir, code)
	assert.Equal(t, "quak: error: backup folder "+missing+" does not exist\n"+
		"quak: hint: is the disk mounted? `quak backup --init DIR` creates a folder that is missing on purpose\n", errOut)

	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "big.jpg", Size: 1 << 20, Seed: 1})
	e.freeSpace = func(string) (int64, error) { return 1 << 10, nil }
	code, _, errOut = e.run("backup", dir)
	assert.Equal(t, exitUnusableDir, code)
	assert.Equal(t, 1, strings.Count(errOut, "quak: hint:"), errOut)
	assert.Contains(t, errOut, "quak: hint: free some space, narrow the backup (--albums, --since, …), or pass --no-space-check\n")

	open := passwordFile(t, "https://hc.example.org/x", 0o640)
	code, _, errOut = e.run("backup", "--healthcheck-url-file", open, dir)
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "quak: error: --healthcheck-url-file: "+open+" is readable by others (mode 0640)\n"+
		"quak: hint: it holds a secret: run `chmod 600 "+open+"`\n", errOut)
}

// An empty folder argument (an unset shell variable) is refused: it would
// otherwise be the current folder, where a backup would make itself.
func TestAnEmptyFolderArgumentIsRefused(t *testing.T) {
	fam := newFamily(t, "alice")
	fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10, Seed: 1})
	cwd := t.TempDir()
	t.Chdir(cwd)
	for _, args := range [][]string{
		{"backup", "--init", "--account", "alice@example.org", ""},
		{"backup", ""},
		{"status", ""},
		{"verify", ""},
		{"prune-trash", "--older-than", "30d", ""},
		{"restore", "--account", "alice@example.org", ""},
		{"restore", "--dry-run", "--account", "alice@example.org", ""},
	} {
		code, _, errOut := fam.e.run(args...)
		assert.Equal(t, exitUsage, code, "%q: %s", args, errOut)
		assert.Contains(t, errOut, `quak: error: the folder given is an empty name: name DIR, or "." for the current folder`, "%q", args)
	}
	es, err := os.ReadDir(cwd)
	require.NoError(t, err)
	assert.Empty(t, es, "nothing made in the current folder")
}
