package cmd

import (
	"fmt"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// sealed is the size of a small original once encrypted for upload: one
// secretstream chunk adds 17 bytes.
func sealed(n int) int64 { return int64(n) + 17 }

// thumbEstimate is what a dry run counts for each thumbnail it would
// upload, so that the target's room is checked against the most it takes.
const thumbEstimate = 100 << 10

// restoreSummary is the one summary of a --json restore's stdout, its last
// line, without its type and time.
func restoreSummary(t *testing.T, out string) map[string]any {
	t.Helper()
	objs := jsonLinesOf(t, out)
	require.NotEmpty(t, objs)
	require.Len(t, ofType(objs, "summary"), 1)
	sum := objs[len(objs)-1]
	require.Equal(t, "summary", sum["type"])
	delete(sum, "type")
	delete(sum, "time")
	return sum
}

// restoreEvents are the types of a --json restore's events, sorted (uploads
// run at once, in no fixed order), the preview and the summary left out.
func restoreEvents(t *testing.T, out string) []string {
	t.Helper()
	var types []string
	for _, o := range jsonLinesOf(t, out) {
		if o["type"] != "summary" && o["type"] != "preview" {
			types = append(types, o["type"].(string))
		}
	}
	sort.Strings(types)
	return types
}

// A restore's output, dry and real: a backup of alice's album Trip (one,
// two, gone) restored into bob's account; then one added to an album Best,
// gone removed from every album, and three (no image quak can read) in a
// new album, backed up and restored again.
func TestRestoreOutputDryAndReal(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	trip := u.AddAlbum("Trip")
	one := trip.AddFile(enteapitest.FileSpec{Title: "one.jpg", Data: enteapitest.FakeJPEG("one")})
	two := trip.AddFile(enteapitest.FileSpec{Title: "two.jpg", Data: enteapitest.FakeJPEG("two")})
	gone := trip.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Data: enteapitest.FakeJPEG("gone")})
	code, out, errOut := e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	bob := s.AddUser("bob@example.org", "pw", enteapitest.UserOptions{})
	code, _, errOut = e.run("login", "--email", bob.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, bob.Password, 0o600))
	require.Equal(t, exitOK, code, errOut)
	first := sealed(len(one.Plaintext())) + sealed(len(two.Plaintext())) + sealed(len(gone.Plaintext()))

	code, out, errOut = e.run("restore", "--account", bob.Email, "--dry-run", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "3 of 3 files would upload to bob@example.org ("+humanBytes(first)+", and at most "+humanBytes(3*thumbEstimate)+
		" of thumbnails), 0 already there, 0 album additions, 1 album created; 0 failed\n", out, "nothing left out: no line says so")

	code, out, errOut = e.run("restore", "--account", bob.Email, "--json", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []string{"album-created", "uploaded", "uploaded", "uploaded"}, restoreEvents(t, out))
	sum := restoreSummary(t, out)
	assert.Positive(t, sum["thumbBytes"])
	delete(sum, "thumbBytes")
	assert.Equal(t, map[string]any{"account": "bob@example.org", "dryRun": false, "files": 3.0, "uploaded": 3.0,
		"present": 0.0, "added": 0.0, "albumsCreated": 1.0, "bytes": float64(first), "failed": 0.0, "leftOut": 0.0,
		"filtered": 0.0, "shared": []any{}, "placeholders": 0.0, "error": nil, "exitCode": 0.0}, sum)

	trip.Remove(gone)
	u.AddAlbum("Best").Add(one)
	u.AddAlbum("New").AddFile(enteapitest.FileSpec{Title: "three.jpg", Size: 1000, Seed: 3})
	code, out, errOut = e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)

	code, out, errOut = e.run("restore", "--account", bob.Email, "--dry-run", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, "1 of 3 files would upload to bob@example.org ("+humanBytes(sealed(1000))+", and at most "+humanBytes(thumbEstimate)+
		" of thumbnails), 2 already there, 1 album addition, 2 albums created; 0 failed\n"+
		"1 file in the backup left out: not saved whole, or deleted from every album before the backup\n", out)

	albums := s.Requests("POST /collections")
	code, out, errOut = e.run("restore", "--account", bob.Email, "--dry-run", "--json", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []string{"present", "present", "would-added", "would-album-created", "would-album-created", "would-uploaded"},
		restoreEvents(t, out), "a dry run's events say what would be done; what is there is there")
	added := ofType(jsonLinesOf(t, out), "would-added")
	require.Len(t, added, 1)
	assert.Equal(t, "one.jpg", added[0]["title"])
	assert.Equal(t, "Best", added[0]["album"])
	assert.Equal(t, map[string]any{"account": "bob@example.org", "dryRun": true, "files": 3.0, "uploaded": 1.0,
		"present": 2.0, "added": 1.0, "albumsCreated": 2.0, "bytes": float64(sealed(1000)), "thumbBytes": float64(thumbEstimate),
		"failed": 0.0, "leftOut": 1.0, "filtered": 0.0, "shared": []any{}, "placeholders": 0.0, "error": nil, "exitCode": 0.0},
		restoreSummary(t, out), "a dry run's bytes are the real run's")
	assert.Equal(t, albums, s.Requests("POST /collections"), "a dry run creates nothing")

	e.terminal = true
	code, out, errOut = e.run("restore", "--account", bob.Email, "--json", dir)
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []string{"added", "album-created", "album-created", "placeholder", "present", "present", "uploaded"},
		restoreEvents(t, out))
	sum = restoreSummary(t, out)
	assert.Positive(t, sum["thumbBytes"])
	delete(sum, "thumbBytes")
	assert.Equal(t, map[string]any{"account": "bob@example.org", "dryRun": false, "files": 3.0, "uploaded": 1.0,
		"present": 2.0, "added": 1.0, "albumsCreated": 2.0, "bytes": float64(sealed(1000)), "failed": 0.0,
		"leftOut": 1.0, "filtered": 0.0, "shared": []any{}, "placeholders": 1.0, "error": nil, "exitCode": 0.0}, sum)
	// The bar is drawn at once toward the bytes to upload: the one
	// upload's 1017.
	assert.Regexp(t, regexp.MustCompile(fmt.Sprintf(`restoring +0%% .*\( *0/%d B\)`, sealed(1000))), errOut, "the bar knows its total")
}

// A restore's JSON summary carries the exit code the run ends with: 2 when
// files failed but the run went on, the error's own otherwise.
func TestRestoreJSONSummaryExitCodes(t *testing.T) {
	e, s, dir := restored(t)
	code, out, errOut := e.run("restore", "--account", "bob@example.org", "--json", t.TempDir())
	assert.Equal(t, exitUnusableDir, code, errOut)
	sum := restoreSummary(t, out)
	assert.Contains(t, sum["error"], "holds no quak backup")
	sum["error"] = "…"
	assert.Equal(t, map[string]any{"account": "bob@example.org", "dryRun": false, "files": 0.0, "uploaded": 0.0,
		"present": 0.0, "added": 0.0, "albumsCreated": 0.0, "bytes": 0.0, "thumbBytes": 0.0, "failed": 0.0, "leftOut": 0.0,
		"filtered": 0.0, "shared": []any{}, "placeholders": 0.0, "error": "…", "exitCode": float64(exitUnusableDir)}, sum, "refused: a summary of nothing")

	s.Inject("POST /files", enteapitest.Status(400))
	code, out, errOut = e.run("restore", "--account", "bob@example.org", "--json", dir)
	assert.Equal(t, exitPartial, code, errOut)
	assert.Contains(t, errOut, "1 file could not be restored")
	assert.Equal(t, []string{"album-created", "failed", "uploaded"}, restoreEvents(t, out))
	sum = restoreSummary(t, out)
	assert.Equal(t, 1.0, sum["uploaded"])
	assert.Equal(t, 1.0, sum["failed"])
	assert.Nil(t, sum["error"], "files failed, the run did not")
	assert.Equal(t, float64(exitPartial), sum["exitCode"])

	s.Inject("POST /files", enteapitest.Status(426))
	code, out, errOut = e.run("restore", "--account", "bob@example.org", "--json", dir)
	assert.Equal(t, exitFatal, code, errOut)
	sum = restoreSummary(t, out)
	assert.Contains(t, sum["error"], "out of storage")
	assert.Equal(t, float64(exitFatal), sum["exitCode"], "an error's code, whatever failed")
}
