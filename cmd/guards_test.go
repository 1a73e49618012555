package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// status refuses to call a backup healthy for a session of another
// account: it is not the session the next backup would need.
func TestStatusRefusesAnotherAccountsSession(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	other := s.AddUser("other@example.org", "other password", enteapitest.UserOptions{})
	if code, _, errOut := e.run("login", "--email", other.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, other.Password, 0o600)); code != 0 {
		t.Fatal(errOut)
	}
	// Logging in adds a session: only with the backup's own gone is the
	// other account's the one status would use.
	if code, _, errOut := e.run("logout", "--account", u.Email); code != 0 {
		t.Fatal(errOut)
	}
	// Recorded as u's, the folder would be checked with u's session (not
	// logged in); unrecorded, the only session there is is the other's.
	if code, _, errOut := e.run("accounts", "--forget", dir); code != 0 {
		t.Fatal(errOut)
	}
	code, out, _ := e.run("status", dir)
	want := fmt.Sprintf("Problem:       logged in as other@example.org on %s (user %d), but this is the backup of %s on %s (user %d)\n",
		s.URL(), other.ID, u.Email, s.URL(), u.ID)
	if code != 3 || !strings.Contains(out, want) {
		t.Fatalf("code %d, %q", code, out)
	}
}

// An album whose listing fails makes the run partial, in its exit code,
// in last-run.json and in status: never a healthy "ok", never a stop for
// the other albums (also when it fails first in the free-space check).
func TestAlbumFailuresReachLastRun(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	u.AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10})
	// A's listing fails in the space check and again when it is synced.
	s.Inject("GET /collections/v2/diff", enteapitest.Status(500), enteapitest.Pass(), enteapitest.Status(500))
	if code, _, errOut := e.run("backup", "--attempts", "1", dir); code != 2 {
		t.Fatalf("code %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "B", "y.jpg")); err != nil {
		t.Fatal("the other album was not backed up")
	}
	b, err := os.ReadFile(folder.At(dir).LastRunPath())
	if err != nil {
		t.Fatal(err)
	}
	var last struct {
		Outcome string         `json:"outcome"`
		Counts  map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(b, &last); err != nil {
		t.Fatal(err)
	}
	if last.Outcome != "partial" || last.Counts["albumsFailed"] != 1 {
		t.Fatalf("last-run.json: %s", b)
	}
	if code, out, _ := e.run("status", "--offline", dir); code == 0 || strings.Contains(out, "healthy") {
		t.Fatalf("status after a failed album: code %d, %q", code, out)
	}
}

// What --prune moved comes back when the server lists it again, and the
// summary says so; a mark the server contradicts is named as kept.
func TestPruneRestoreAndKeptAreReported(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	if code, out, _ := e.run("backup", dir); code != 0 || strings.Contains(out, "trash") {
		t.Fatalf("backup: code %d, %q: the summary speaks of the trash only when something moved", code, out)
	}
	a.Remove(x)
	if code, _, errOut := e.run("backup", "--prune", dir); code != 0 || !strings.Contains(errOut, "moved to the trash") {
		t.Fatalf("prune: code %d, %q", code, errOut)
	}
	a.Add(x)
	code, out, errOut := e.run("backup", dir)
	if code != 0 || !strings.Contains(out, "1 moved back from the trash") ||
		!strings.Contains(errOut, "moved back from the trash (listed on the server again): "+filepath.Join("A", "x.jpg")) {
		t.Fatalf("restore: code %d\n%s%s", code, out, errOut)
	}

	// A listing that wrongly says y is gone marks it; --prune asks, and keeps it.
	a.AddFile(enteapitest.FileSpec{Title: "z.jpg", Size: 10, Seed: 3})
	s.Inject("GET /collections/v2/diff", enteapitest.StatusBody(200, fmt.Sprintf(
		`{"diff":[{"id":%d,"collectionID":%d,"ownerID":%d,"isDeleted":true,"updationTime":%d}],"hasMore":false}`,
		y.ID, a.ID, u.ID, 1_700_000_000_000_000+10_000)))
	if code, _, _ := e.run("backup", "--no-space-check", dir); code != 0 {
		t.Fatal("backup failed")
	}
	code, out, errOut = e.run("backup", "--prune", "--json", dir)
	kept := ofType(jsonLinesOf(t, out), "prune-kept")
	if code != 0 || len(kept) != 1 || kept[0]["fileID"] != float64(y.ID) || !strings.Contains(kept[0]["reason"].(string), "wrongly") ||
		!strings.Contains(errOut, "not moving "+filepath.Join("A", "y.jpg")+" to the trash") {
		t.Fatalf("code %d, prune-kept %v\n%s", code, kept, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "A", "y.jpg")); err != nil {
		t.Fatal("a live file was moved")
	}
}

// A --dry-run refused while a backup holds the folder is a preview, not a
// backup: it records no refusal, so status stays healthy; and a dry run
// can never --init (it writes nothing).
func TestARefusedDryRunRecordsNothing(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	st, err := folder.At(dir).OpenState() // as a running backup holds it
	require.NoError(t, err)
	code, _, errOut := e.run("backup", "--dry-run", dir)
	require.NoError(t, st.Close())
	require.Equal(t, exitLocked, code, errOut)
	_, err = folder.At(dir).LastRefusal()
	assert.True(t, os.IsNotExist(err), "no refusal recorded for a preview")
	code, lines := statusOf(t, e, dir)
	assert.Equal(t, exitOK, code, lines)

	fresh := filepath.Join(t.TempDir(), "new")
	code, _, errOut = e.run("backup", "--dry-run", "--init", fresh)
	assert.Equal(t, exitUsage, code, errOut)
	assert.Contains(t, errOut, "--dry-run writes nothing")
	assert.NoDirExists(t, fresh)
}

// A health-check URL needs a scheme and a host: "https://" alone is a
// usage error, never a ping to nowhere.
func TestAHealthCheckURLWithoutAHostIsRefused(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	for _, bad := range []string{"https://", "ftp://example.org/x", "example.org/ping"} {
		code, _, errOut := e.run("backup", "--healthcheck-url", bad, dir)
		assert.Equal(t, exitUsage, code, "%s: %s", bad, errOut)
		assert.Contains(t, errOut, "must be an http(s) URL", bad)
	}
}

// --all pings once for the whole run also when the URL comes from
// $QUAK_HEALTHCHECK_URL_FILE: the folders' runs never ping on their own.
func TestBackupAllPingsOnceFromAURLFile(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	for _, n := range []string{"alice", "bob"} {
		fam.users[n].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: n + ".jpg", Size: 10, Seed: 1})
		fam.record(t, n)
	}
	var log pingLog
	srv := log.server(t)
	fam.e.vars["QUAK_HEALTHCHECK_URL_FILE"] = passwordFile(t, srv.URL+"/p", 0o600)
	code, _, errOut := fam.e.run("backup", "--all")
	require.Equal(t, exitOK, code, errOut)
	assert.Equal(t, []string{"GET /p/start", "POST /p"}, log.pings, "one start and one end for the whole run")
}
