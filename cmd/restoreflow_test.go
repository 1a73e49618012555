package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/restore"
)

// A restore says first what it restores into which account and how many
// files that account holds: on stderr, and as a preview line of --json.
func TestRestoreSaysFirstWhereFromAndInto(t *testing.T) {
	e, s, dir := restored(t)
	code, out, errOut := e.run("restore", "--account", "bob@example.org", "--dry-run", dir)
	require.Equal(t, exitOK, code, errOut)
	first := strings.SplitN(errOut, "\n", 2)[0]
	assert.Equal(t, fmt.Sprintf("Would restore alice@example.org on %s (the quak backup in %s) → bob@example.org on %s, which holds 0 files.", s.URL(), dir, s.URL()), first)
	assert.NotEmpty(t, out)

	code, out, errOut = e.run("restore", "--account", "bob@example.org", "--json", dir)
	require.Equal(t, exitOK, code, errOut)
	objs := jsonLinesOf(t, out)
	require.Equal(t, "preview", objs[0]["type"], "the preview comes first")
	pv := objs[0]
	assert.Equal(t, "bob@example.org", pv["account"])
	assert.Equal(t, 0.0, pv["accountFiles"])
	assert.Equal(t, 2.0, pv["toUpload"])
	assert.Equal(t, map[string]any{"kind": "quak backup", "email": "alice@example.org", "endpoint": s.URL()}, pv["from"])
	assert.Equal(t, restoreSummary(t, out)["bytes"], pv["bytes"], "the preview's bytes are what went")
	hasKeys(t, pv, "sameAccount", "resuming", "dryRun", "thumbBytes", "incomplete", "missingTools", "shared", "journal")
}

// An account that holds files and is not the one backed up is written
// into only when asked: on a terminal after a yes, without one with --yes.
func TestRestoreAsksBeforeWritingIntoAnAccountThatHoldsFiles(t *testing.T) {
	e, s, dir := restored(t)
	s.User("bob@example.org").AddAlbum("Bob's").AddFile(enteapitest.FileSpec{Title: "bob.jpg", Data: enteapitest.FakeJPEG("bob")})

	code, out, errOut := e.run("restore", "--account", "bob@example.org", dir)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "bob@example.org on "+s.URL()+" already holds 1 file and is not the account the backup is of; not restoring into it without --yes")
	assert.Contains(t, errOut, "quak: hint: check --account and --endpoint; add --yes to restore into it anyway")
	assert.Empty(t, out, "nothing to sum up")
	assert.Zero(t, s.Requests("POST /files/upload-url"), "nothing sent")

	code, _, errOut = e.run("restore", "--account", "bob@example.org", "--dry-run", dir)
	assert.Equal(t, exitOK, code, "a dry run writes nothing: it need not ask\n"+errOut)

	e.readPassword = func() ([]byte, error) { return nil, nil } // stdin is a terminal
	e.stdin = "n\n"
	code, _, errOut = e.run("restore", "--account", "bob@example.org", dir)
	assert.Equal(t, exitFatal, code, errOut)
	assert.Contains(t, errOut, "Restore into it? [y/N] ")
	assert.Contains(t, errOut, "not restored: nothing was sent")
	assert.Zero(t, s.Requests("POST /files/upload-url"))

	e.stdin = "y\n"
	code, out, errOut = e.run("restore", "--account", "bob@example.org", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "2 of 2 files uploaded")

	e.readPassword, e.stdin = nil, ""
	code, _, errOut = e.run("restore", "--account", "bob@example.org", dir)
	assert.Equal(t, exitOK, code, "a restore going on with its journal is not asked again\n"+errOut)
}

func TestRestoreWithYesAsksNothing(t *testing.T) {
	e, s, dir := restored(t)
	s.User("bob@example.org").AddAlbum("Bob's").AddFile(enteapitest.FileSpec{Title: "bob.jpg", Data: enteapitest.FakeJPEG("bob")})
	code, out, errOut := e.run("restore", "--account", "bob@example.org", "--yes", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "2 of 2 files uploaded")
	assert.NotContains(t, errOut, "[y/N]")
}

// aMove is the move of docs/restore.md half done: carol's library on old
// backed up into dir, and her email logged in on both servers.
type aMove struct {
	e        *env
	old, neu *enteapitest.Server
	u, moved *enteapitest.User // carol on old, and on neu
	dir      string
}

func halfMoved(t *testing.T) *aMove {
	t.Helper()
	old := enteapitest.New(enteapitest.Config{})
	t.Cleanup(old.Close)
	u := old.AddUser("carol@example.org", "old password", enteapitest.UserOptions{})
	u.AddAlbum("Trip").AddFile(enteapitest.FileSpec{Title: "one.jpg", Data: enteapitest.FakeJPEG("one")})
	neu := enteapitest.New(enteapitest.Config{})
	t.Cleanup(neu.Close)
	neu.AddUser("first@example.org", "pw", enteapitest.UserOptions{}) // carol's user id differs on neu, as between real servers
	moved := neu.AddUser(u.Email, "new password", enteapitest.UserOptions{})
	m := &aMove{e: newEnv(t), old: old, neu: neu, u: u, moved: moved, dir: filepath.Join(t.TempDir(), "carol")}
	for _, args := range [][]string{
		{"login", "--email", u.Email, "--endpoint", old.URL(), "--password-file", passwordFile(t, u.Password, 0o600)},
		{"backup", "--init", "--account", u.Email, m.dir},
		{"login", "--email", u.Email, "--endpoint", neu.URL(), "--password-file", passwordFile(t, moved.Password, 0o600)},
	} {
		code, out, errOut := m.e.run(args...)
		require.Equal(t, exitOK, code, "%v\n%s%s", args, out, errOut)
	}
	return m
}

// The move of docs/restore.md with the same email on both servers: the
// restore is told the server with --endpoint, and without it says so.
func TestTheMoveWithOneEmailOnTwoServers(t *testing.T) {
	m := halfMoved(t)
	e, u, old, neu, dir := m.e, m.u, m.old, m.neu, m.dir
	code, _, errOut := e.run("restore", "--account", u.Email, dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "several logged-in accounts match")
	assert.Contains(t, errOut, "--endpoint URL")

	code, out, errOut := e.run("restore", "--account", u.Email, "--endpoint", neu.URL(), dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "1 of 1 file uploaded to "+u.Email+" (")
	assert.Equal(t, 1, neu.Requests("POST /files"))
	assert.Zero(t, old.Requests("POST /files"), "nothing goes back into the old server")

	code, out, errOut = e.run("restore", "--account", u.Email, "--endpoint", neu.URL()+"/", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "0 of 1 file uploaded to "+u.Email+" (", "the same server however spelt: its journal")
}

// With one email logged in on two servers, logout says which it ended.
func TestLogoutSaysWhichServer(t *testing.T) {
	m := halfMoved(t)
	code, out, errOut := m.e.run("logout", "--account", m.u.Email, "--endpoint", m.old.URL())
	require.Equal(t, exitOK, code, errOut)
	assert.True(t, strings.HasPrefix(out, "Logged out carol@example.org on "+m.old.URL()+".\n"+m.dir+" stays recorded as its backup"), out)
	code, out, _ = m.e.run("logout", "--account", m.u.Email, "--endpoint", m.old.URL())
	require.Equal(t, exitOK, code)
	assert.Equal(t, "Not logged in as carol@example.org on "+m.old.URL()+".\n", out)
	code, out, _ = m.e.run("logout", "--endpoint", m.old.URL())
	require.Equal(t, exitOK, code)
	assert.Equal(t, "Logged out carol@example.org on "+m.neu.URL()+".\n", out, "--endpoint counts only with --account")
}

// After the move, the old folder is the old server's account's backup:
// status and backup name both servers, so that the same email on each
// reads as the two accounts it is.
func TestTheOldFolderNamesBothServers(t *testing.T) {
	m := halfMoved(t)
	for _, args := range [][]string{{"logout", "--account", m.u.Email, "--endpoint", m.old.URL()}, {"accounts", "--forget", m.dir}} {
		code, out, errOut := m.e.run(args...)
		require.Equal(t, exitOK, code, "%v\n%s%s", args, out, errOut)
	}
	code, out, _ := m.e.run("status", m.dir)
	require.Equal(t, exitLogin, code, out)
	assert.Contains(t, out, fmt.Sprintf("Problem:       logged in as carol@example.org on %s (user %d), but this is the backup of carol@example.org on %s (user %d)\n",
		m.neu.URL(), m.moved.ID, m.old.URL(), m.u.ID))

	code, _, errOut := m.e.run("backup", m.dir)
	require.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, fmt.Sprintf("backup folder %s is the backup of carol@example.org on %s (user %d), not of carol@example.org on %s (user %d)",
		m.dir, m.old.URL(), m.u.ID, m.neu.URL(), m.moved.ID))
	assert.Zero(t, m.neu.RequestsWithPrefix("GET /store/"), "nothing downloaded")
}

// The end of the move as docs/restore.md tells it: a new folder's first
// backup needs the old server logged out first, and the old folder makes
// --all, status and accounts say "not logged in" until it is forgotten.
func TestAfterTheMoveAsTheDocsSay(t *testing.T) {
	m := halfMoved(t)
	fresh := filepath.Join(t.TempDir(), "carol-new")
	code, out, errOut := m.e.run("backup", "--init", "--account", m.u.Email, fresh)
	assert.Equal(t, exitUsage, code, out+errOut)
	assert.Contains(t, errOut, "carol@example.org is logged in on several servers")
	assert.Contains(t, errOut, "quak logout --account EMAIL --endpoint URL")

	for _, args := range [][]string{{"logout", "--account", m.u.Email, "--endpoint", m.old.URL()}, {"backup", "--init", "--account", m.u.Email, fresh}} {
		code, out, errOut = m.e.run(args...)
		require.Equal(t, exitOK, code, "%v\n%s%s", args, out, errOut)
	}
	for _, args := range [][]string{{"backup", "--all"}, {"status", "--all"}, {"accounts"}} {
		code, out, errOut = m.e.run(args...)
		assert.Equal(t, exitLogin, code, "%v: the old folder is not logged in\n%s%s", args, out, errOut)
	}
	code, out, errOut = m.e.run("accounts", "--forget", m.dir)
	require.Equal(t, exitOK, code, out+errOut)
	for _, args := range [][]string{{"backup", "--all"}, {"status", "--all"}, {"accounts"}} {
		code, out, errOut = m.e.run(args...)
		assert.Equal(t, exitOK, code, "%v\n%s%s", args, out, errOut)
	}
}

// A backup whose runs never completed says so first, loudly, in the dry
// run as in the real one.
func TestRestoreWarnsOfABackupThatNeverCompleted(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	trip := u.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "one.jpg", Data: enteapitest.FakeJPEG("one")})
	lost := trip.AddFile(enteapitest.FileSpec{Title: "lost.jpg", Data: enteapitest.FakeJPEG("lost")})
	s.Inject(fmt.Sprintf("GET /files/download/%d", lost.ID), enteapitest.Repeat(enteapitest.Status(404), 40)...)
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitPartial, code, out+errOut)
	bob := s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	code, _, errOut = e.run("login", "--email", bob.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, bob.Password, 0o600))
	require.Equal(t, exitOK, code, errOut)
	for _, dry := range []bool{true, false} {
		args := []string{"restore", "--account", bob.Email, dir}
		if dry {
			args = append(args, "--dry-run")
		}
		code, _, errOut = e.run(args...)
		require.Equal(t, exitOK, code, errOut)
		lines := strings.Split(errOut, "\n")
		require.GreaterOrEqual(t, len(lines), 2)
		assert.Regexp(t, `^WARNING: this backup never completed a run \(its last ended partial at [0-9TZ:-]+\): it may lack files the account had, and 1 file it listed was never saved\.`, lines[1])
	}
}

// Missing thumbnail programs are said once at the start, with how many
// files they leave with Ente's placeholder, and once at the end; not a
// line per file.
func TestRestoreSaysMissingThumbnailToolsOnce(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	e, s, u, dir := loggedIn(t)
	trip := u.AddAlbum("Trip")
	for i := range 3 {
		trip.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("clip%d.mp4", i), FileType: 1, Data: []byte(fmt.Sprintf("video %d", i))})
	}
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	bob := enteapitestLogin(t, e, s)
	for _, dry := range []bool{true, false} {
		args := []string{"restore", "--account", bob, dir}
		if dry {
			args = append(args, "--dry-run")
		}
		code, out, errOut = e.run(args...)
		require.Equal(t, exitOK, code, errOut)
		assert.Equal(t, 1, strings.Count(errOut, "WARNING: ffmpeg is not on PATH: 3 files to upload get Ente's black placeholder thumbnail"), errOut)
		assert.NotContains(t, errOut, "placeholder thumbnail for", "no line per file")
	}
	assert.Contains(t, out, "3 files got Ente's placeholder thumbnail (3 for want of ffmpeg)\n")
}

// enteapitestLogin adds bob on s, logs him in, and returns his email.
func enteapitestLogin(t *testing.T, e *env, s *enteapitest.Server) string {
	t.Helper()
	bob := s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	code, _, errOut := e.run("login", "--email", bob.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, bob.Password, 0o600))
	require.Equal(t, exitOK, code, errOut)
	return bob.Email
}

// The preview's lines: shared albums left out, the journal kept outside
// a folder that cannot be written.
func TestPreviewLinesSayWhatIsLeftOutAndWhereTheJournalIs(t *testing.T) {
	lines := previewLines(&restore.Preview{From: restore.Origin{Kind: restore.FromBackup, Email: "alice@example.org", Endpoint: "https://a"},
		ToEmail: "alice@example.org", ToEndpoint: "https://a", ToFiles: 12, Same: true,
		Shared: []string{"Family", "Trip"}, Journal: "/cfg/restore-journals/x", JournalWhy: restore.JournalReadOnly}, "/mnt/snap")
	assert.Equal(t, []string{
		"Restoring alice@example.org on https://a (the quak backup in /mnt/snap) into the same account, which holds 12 files: only what it lacks is uploaded.",
		"Left out: 2 albums others shared with the account (Family, Trip); --no-shared=false brings them back as its own.",
		"/mnt/snap cannot be written: the restore's journal is kept in /cfg/restore-journals/x.",
	}, lines)
	lines = previewLines(&restore.Preview{From: restore.Origin{Kind: restore.FromExport}, ToEmail: "b@example.org", ToEndpoint: "https://b",
		DryRun: true, JournalWhy: restore.JournalFound, Journal: "/j"}, "/x")
	assert.Equal(t, []string{
		"Would restore the Ente CLI export in /x → b@example.org on https://b, which holds 0 files.",
		"The restore's journal is kept in /j, where an earlier restore of this backup into this account left it.",
	}, lines)
}

// A count's verb agrees with it: 1 file gets, 12 files get.
func TestPreviewLinesAgreeWithTheirCounts(t *testing.T) {
	lines := previewLines(&restore.Preview{From: restore.Origin{Kind: restore.FromExport}, ToEmail: "b@example.org", ToEndpoint: "https://b",
		Incomplete: &restore.Incomplete{Lacking: 1}, Tools: []restore.MissingTool{{Tool: "ffmpeg", Files: 1}, {Tool: "heif-convert", Files: 12}}}, "/x")
	require.Len(t, lines, 4)
	assert.Contains(t, lines[1], ", and 1 file it listed was never saved.")
	assert.Contains(t, lines[2], "WARNING: ffmpeg is not on PATH: 1 file to upload gets Ente's black placeholder thumbnail,")
	assert.Contains(t, lines[3], "WARNING: heif-convert is not on PATH: 12 files to upload get Ente's black placeholder thumbnail,")
	lines = previewLines(&restore.Preview{From: restore.Origin{Kind: restore.FromExport}, Incomplete: &restore.Incomplete{Lacking: 2}}, "/x")
	assert.Contains(t, lines[1], ", and 2 files it listed were never saved.")
}

// --albums takes what backup's takes; a pattern that matches nothing is
// refused with the nearest names.
func TestRestoreTakesAlbumsAsBackupDoes(t *testing.T) {
	e, _, dir := restored(t)
	code, out, errOut := e.run("restore", "--account", "bob@example.org", "--dry-run", "--albums", "Trp", dir)
	assert.Equal(t, exitUsage, code, out)
	assert.Contains(t, errOut, `--albums "Trp" matches no album; nearest: "Trip"`)
	code, out, errOut = e.run("restore", "--account", "bob@example.org", "--dry-run", "--exclude-albums", "Trip", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "0 of 0 files would upload")
	assert.Contains(t, out, "2 files left out by the choice of albums")
}

// A restore stopped by the server's rate limit ends 75, with its hint.
// The summary says why files got the placeholder: a missing program, or a
// format none reads.
func TestPlaceholderWhyCountsEachCause(t *testing.T) {
	out := &restoreOutput{pv: &restore.Preview{Tools: []restore.MissingTool{{Tool: "ffmpeg", Files: 2}, {Tool: "heif-dec", Files: 1}}}}
	assert.Equal(t, " (2 for want of ffmpeg, 1 for want of heif-dec, 4 in a format no program here reads)", out.placeholderWhy(7))
	assert.Equal(t, " (2 for want of ffmpeg, 1 for want of heif-dec)", out.placeholderWhy(3))
	assert.Equal(t, " (1 in a format no program here reads)", (&restoreOutput{}).placeholderWhy(1))
}

func TestRestoreErrorGivesTheRateLimitItsCode(t *testing.T) {
	err := restoreError(&restore.RateLimitError{Route: "POST /files/upload-url", Err: os.ErrDeadlineExceeded})
	assert.Equal(t, exitTempFail, exitCodeFor(err))
	assert.Equal(t, "try again later; the next run carries on where this one stopped", hintFor(err, exitTempFail, "quak restore"))
	other := os.ErrClosed
	assert.Equal(t, other, restoreError(other))
}
