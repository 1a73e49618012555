package cmd

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// family is one config with several accounts of one server logged in, each
// with a backup folder recorded by backup --init --account.
type family struct {
	e     *env
	s     *enteapitest.Server
	users map[string]*enteapitest.User
	dirs  map[string]string
}

func newFamily(t *testing.T, names ...string) *family {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	f := &family{e: newEnv(t), s: s, users: map[string]*enteapitest.User{}, dirs: map[string]string{}}
	root := t.TempDir()
	for _, n := range names {
		u := s.AddUser(n+"@example.org", n+" password", enteapitest.UserOptions{})
		f.users[n] = u
		f.login(t, n)
		f.dirs[n] = filepath.Join(root, n)
	}
	return f
}

func (f *family) login(t *testing.T, name string) {
	t.Helper()
	u := f.users[name]
	if code, _, errOut := f.e.run("login", "--email", u.Email, "--endpoint", f.s.URL(), "--password-file", passwordFile(t, u.Password, 0o600)); code != exitOK {
		t.Fatal(errOut)
	}
}

// record makes name's folder with a first backup of what name has now.
func (f *family) record(t *testing.T, name string) {
	t.Helper()
	if code, out, errOut := f.e.run("backup", "--init", "--account", f.users[name].Email, f.dirs[name]); code != exitOK {
		t.Fatalf("%s: code %d\n%s%s", name, code, out, errOut)
	}
}

func requireFile(t *testing.T, path string, want []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, string(b) == string(want), "%s differs", path)
}

// One cron line backs up a family: an account whose session is revoked in
// the middle of its run and one whose disk is not mounted fail alone, the
// others are saved, the exit code is the worst by the exit-code table's
// order, the health check hears one start and one end, and every JSON line
// names its account.
func TestBackupAllIsolatesEachAccountsFailure(t *testing.T) {
	fam := newFamily(t, "alice", "bob", "carol", "dave")
	for _, n := range []string{"alice", "bob", "carol", "dave"} {
		fam.users[n].AddAlbum(n + "'s album").AddFile(enteapitest.FileSpec{Title: n + "0.jpg", Size: 100, Seed: 1})
		fam.record(t, n)
	}
	alice := fam.users["alice"].AddAlbum("New").AddFile(enteapitest.FileSpec{Title: "new.jpg", Size: 5000, Seed: 7})
	carol := fam.users["carol"]
	ca := carol.AddAlbum("Trip")
	first := ca.AddFile(enteapitest.FileSpec{Title: "c1.jpg", Size: 300, Seed: 2})
	ca.AddFile(enteapitest.FileSpec{Title: "c2.jpg", Size: 300, Seed: 3})
	garden := fam.users["dave"].AddAlbum("Garden")
	dave := garden.AddFile(enteapitest.FileSpec{Title: "rose.jpg", Size: 700, Seed: 4})
	thorn := garden.AddFile(enteapitest.FileSpec{Title: "thorn.jpg", Size: 100, Seed: 5})
	fam.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", fam.users["dave"].ID, thorn.ID), enteapitest.FlipAt(30))
	require.NoError(t, os.RemoveAll(fam.dirs["bob"]), "bob's disk is not mounted")
	// carol logs out of every device while her backup downloads.
	fam.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if route == fmt.Sprintf("GET /files/download/%d", first.ID) {
			carol.RevokeSessions()
		}
		return enteapitest.Fault{}, false
	})
	var log pingLog
	srv := log.server(t)

	code, out, errOut := fam.e.run("backup", "--all", "--json", "--healthcheck-url", srv.URL+"/p")
	require.Equal(t, exitUnusableDir, code, "bob's missing folder (5) is worse than carol's session (3)\n%s%s", out, errOut)

	requireFile(t, filepath.Join(fam.dirs["alice"], "New", "new.jpg"), alice.Plaintext())
	requireFile(t, filepath.Join(fam.dirs["dave"], "Garden", "rose.jpg"), dave.Plaintext())
	_, err := os.Stat(fam.dirs["bob"])
	assert.True(t, os.IsNotExist(err), "a missing folder is never created by --all")
	assert.Contains(t, errOut, "quak: error: bob@example.org, "+fam.dirs["bob"]+": ")
	assert.Contains(t, errOut, "does not exist")
	assert.Contains(t, errOut, "quak: error: carol@example.org, "+fam.dirs["carol"]+": ")

	assert.Equal(t, []string{"GET /p/start", "POST /p/fail"}, log.pings, "one ping for the whole run")
	body := log.bodies[1]
	assert.True(t, strings.HasPrefix(body, "exit code 5\nFAILED (exit code 5): Total for 4 of 4 folders: "), body)
	for _, want := range []string{"alice@example.org, " + fam.dirs["alice"] + ": exit code 0: 1 new",
		"bob@example.org, " + fam.dirs["bob"] + ": exit code 5: refused before it started",
		"carol@example.org, " + fam.dirs["carol"] + ": exit code 3",
		"dave@example.org, " + fam.dirs["dave"] + ": exit code 2: 1 new",
		"Total for 4 of 4 folders: "} {
		assert.Contains(t, body, want)
		assert.Contains(t, errOut, want, "the same lines for a person")
	}

	objs := jsonLinesOf(t, out)
	for _, o := range objs {
		if o["type"] != "total" {
			require.Contains(t, []any{"alice@example.org", "bob@example.org", "carol@example.org", "dave@example.org"}, o["account"], "%v", o)
			require.NotEmpty(t, o["dir"])
		}
	}
	// carol's second file may have been on its way when her session ended.
	saved := map[any]any{}
	for _, o := range ofType(objs, "saved") {
		saved[o["title"]] = o["account"]
		if o["account"] == "alice@example.org" {
			assert.Equal(t, fam.dirs["alice"], o["dir"])
		}
	}
	assert.Equal(t, "alice@example.org", saved["new.jpg"])
	assert.Equal(t, "dave@example.org", saved["rose.jpg"])
	assert.NotContains(t, saved, "c1.jpg")
	sums := ofType(objs, "summary")
	require.Len(t, sums, 4, "one summary per account, refused runs too")
	codes := map[any]any{}
	for _, s := range sums {
		codes[s["account"]] = s["exitCode"]
	}
	assert.Equal(t, map[any]any{"alice@example.org": 0.0, "bob@example.org": 5.0, "carol@example.org": 3.0, "dave@example.org": 2.0}, codes)
	total := ofType(objs, "total")
	require.Len(t, total, 1)
	assert.Equal(t, 5.0, total[0]["exitCode"])
	assert.Contains(t, total[0]["error"], "3 of 4 folders did not fully succeed")
	assert.Equal(t, float64(len(saved)), total[0]["counts"].(map[string]any)["new"], "the total adds up the runs")
	assert.Nil(t, total[0]["account"])
	assert.Equal(t, map[string]any{"corrupt": 1.0}, total[0]["reasons"], "dave's damaged file")
	assert.Contains(t, errOut, "quak: error: 3 of 4 folders did not fully succeed (exit code 5")

	// The next run, with bob's disk back and carol logged in again, is clean.
	require.NoError(t, os.Mkdir(fam.dirs["bob"], 0o755))
	fam.s.SetChaos(nil)
	fam.login(t, "carol")
	logFile := filepath.Join(t.TempDir(), "quak.log")
	code, out, errOut = fam.e.run("backup", "--all", "--log-file", logFile)
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	requireFile(t, filepath.Join(fam.dirs["carol"], "Trip", "c1.jpg"), first.Plaintext())
	logged, err := os.ReadFile(logFile)
	require.NoError(t, err)
	assert.Contains(t, string(logged), "Total for 4 of 4 folders: ", "the total reaches the log too")
	qcode, qout, qerr := fam.e.run("backup", "--all", "-q")
	assert.Equal(t, exitOK, qcode)
	assert.Empty(t, qout+qerr, "-q: a clean --all says nothing")
	assert.Contains(t, out, "== carol@example.org on "+fam.s.URL()+": "+fam.dirs["carol"])
}

// The exit code of an --all run is the worst of its runs' codes in the
// order the exit-code table gives.
func TestWorseOrder(t *testing.T) {
	order := []int{exitTerminated, exitInterrupt, exitFatal, exitUnusableDir, exitLogin, exitTempFail, exitLocked, exitStale, exitPartial, exitOK}
	for i, a := range order {
		for j, b := range order {
			want := a
			if j < i {
				want = b
			}
			assert.Equal(t, want, worse(a, b), "worse(%d, %d)", a, b)
		}
	}
	assert.Equal(t, 77, worse(exitUnusableDir, 77), "a code quak does not list counts as fatal")
	assert.Equal(t, exitInterrupt, worse(77, exitInterrupt))
	assert.Equal(t, exitFatal, worse(exitFatal, 77), "between codes as bad, the first stays")
	assert.Equal(t, exitLogin, worse(exitTempFail, exitLogin), "a session to renew outranks a server that was away")
	assert.Equal(t, exitTempFail, worse(exitLocked, exitTempFail), "a server that was away outranks a lock held")
}

// A folder another run holds is reported locked; the others still run.
func TestBackupAllSkipsALockedFolder(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	for _, n := range []string{"alice", "bob"} {
		fam.record(t, n)
	}
	unlock, err := folder.At(fam.dirs["alice"]).Lock()
	require.NoError(t, err)
	defer unlock()
	f := fam.users["bob"].AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10})
	code, out, errOut := fam.e.run("backup", "--all")
	require.Equal(t, exitLocked, code, "%s%s", out, errOut)
	requireFile(t, filepath.Join(fam.dirs["bob"], "B", "b.jpg"), f.Plaintext())
}

// quak accounts lists each session with its folders and whether the server
// still accepts it; logout --account ends one and keeps the others.
func TestAccountsAndLogoutOfOne(t *testing.T) {
	fam := newFamily(t, "alice", "carol")
	e := fam.e
	fam.record(t, "alice")
	fam.record(t, "carol")

	code, out, errOut := e.run("accounts")
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Contains(t, out, "alice@example.org (user ")
	assert.Contains(t, out, "on "+fam.s.URL()+": session valid\n  "+fam.dirs["alice"]+"\n")
	assert.Contains(t, out, "carol@example.org (user ")

	code, _, errOut = e.run("whoami")
	require.Equal(t, exitUsage, code, "whoami cannot guess: %s", errOut)
	code, out, errOut = e.run("whoami", "--account", "carol@example.org")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "carol@example.org (user ")
	code, _, _ = e.run("logout")
	require.Equal(t, exitUsage, code, "logout cannot guess")

	fam.users["carol"].RevokeSessions()
	code, out, _ = e.run("accounts")
	require.Equal(t, exitLogin, code, out)
	assert.Contains(t, out, "carol@example.org (user ")
	assert.Contains(t, out, "session rejected by the server: run quak login --email carol@example.org")
	code, out, _ = e.run("accounts", "--offline")
	require.Equal(t, exitOK, code, out)

	tokens := fam.users["alice"].TokenCount()
	code, out, errOut = e.run("logout", "--account", "ALICE@example.org")
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Contains(t, out, fam.dirs["alice"]+" stays recorded as its backup")
	assert.Equal(t, tokens-1, fam.users["alice"].TokenCount(), "alice's session ended on the server")
	b, err := os.ReadFile(e.sessionFile())
	require.NoError(t, err)
	assert.NotContains(t, string(b), "alice@example.org")
	assert.Contains(t, string(b), "carol@example.org")

	code, out, _ = e.run("accounts", "--offline", "--json")
	require.Equal(t, exitLogin, code, "alice's folder is recorded but she is logged out")
	objs := jsonLinesOf(t, out)
	require.Len(t, objs, 2)
	assert.Equal(t, "carol@example.org", objs[0]["account"])
	assert.Equal(t, "alice@example.org", objs[1]["account"])
	assert.Equal(t, "none: run quak login --email alice@example.org", objs[1]["session"])
	code, _, errOut = e.run("backup", fam.dirs["alice"])
	require.Equal(t, exitLogin, code, errOut)
	assert.Contains(t, errOut, "belongs to alice@example.org")

	code, out, _ = e.run("logout", "--account", "alice@example.org")
	require.Equal(t, exitOK, code, "already logged out is not an error")
	assert.Equal(t, "Not logged in as alice@example.org.\n", out)

	fam.s.Inject("GET /users/session-validity/v2", enteapitest.Status(500))
	code, out, _ = e.run("accounts")
	require.Equal(t, exitFatal, code, out)
	assert.Contains(t, out, "carol@example.org (user ")
	assert.Contains(t, out, "session could not be checked: ")
}

// status --all and verify --all follow the same rules as backup --all.
func TestStatusAndVerifyAll(t *testing.T) {
	fam := newFamily(t, "alice", "carol")
	e := fam.e
	for _, n := range []string{"alice", "carol"} {
		fam.users[n].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: n + ".jpg", Size: 100, Seed: 1})
		fam.record(t, n)
	}
	code, out, errOut := e.run("status", "--all", "--json")
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	objs := ofType(jsonLinesOf(t, out), "status")
	require.Len(t, objs, 2)
	assert.Equal(t, "alice@example.org", objs[0]["account"])
	assert.Equal(t, "valid", objs[1]["session"], "carol's own session is checked")

	code, out, errOut = e.run("verify", "--all")
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	assert.Contains(t, out, "== alice@example.org")
	assert.Contains(t, out, "== carol@example.org")

	require.NoError(t, os.WriteFile(filepath.Join(fam.dirs["carol"], "A", "carol.jpg"), []byte("rot"), 0o644))
	code, out, errOut = e.run("verify", "--all", "--json")
	require.Equal(t, exitPartial, code, "%s%s", out, errOut)
	probs := ofType(jsonLinesOf(t, out), "problem")
	require.NotEmpty(t, probs)
	assert.Equal(t, "carol@example.org", probs[0]["account"])

	fam.users["alice"].RevokeSessions()
	code, out, _ = e.run("status", "--all")
	require.Equal(t, exitLogin, code, out)
	assert.Contains(t, out, "alice@example.org, "+fam.dirs["alice"]+": exit code 3")
	assert.Contains(t, out, "carol@example.org, "+fam.dirs["carol"]+": exit code 2", "carol's verify found a changed file")

	code, _, _ = e.run("status", "--all", fam.dirs["alice"])
	require.Equal(t, exitUsage, code, "--all takes no folder")
}

// The thumbnail helper repairs the account it is told, and asks which one
// when several are logged in.
func TestFixThumbnailsAccount(t *testing.T) {
	fam := newFamily(t, "alice", "carol")
	e := fam.e
	code, _, errOut := e.run("helper", "fix-missing-thumbnails", "--dry-run")
	require.Equal(t, exitUsage, code, errOut)
	code, out, errOut := e.run("helper", "fix-missing-thumbnails", "--dry-run", "--json", "--account", fam.users["carol"].Email)
	require.Equal(t, exitOK, code, "%s%s", out, errOut)
	code, _, errOut = e.run("helper", "fix-missing-thumbnails", "--dry-run", "--account", "nobody@example.org")
	require.Equal(t, exitLogin, code, errOut)
}

// An interrupted --all stops: the folders after the interrupted one are not
// started, and the run ends as interrupted, in its code and its ping.
func TestBackupAllStopsWhenInterrupted(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	for _, n := range []string{"alice", "bob"} {
		fam.record(t, n)
	}
	a := fam.users["alice"].AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 10})
	fam.users["bob"].AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "b.jpg", Size: 10})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fam.s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if route == fmt.Sprintf("GET /files/download/%d", a.ID) {
			cancel()
		}
		return enteapitest.Fault{}, false
	})
	var log pingLog
	srv := log.server(t)
	var out, errb bytes.Buffer
	e := fam.e
	d := deps{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return e.vars[k] },
		sleep: func(context.Context, time.Duration) error { return nil }}
	code := run(ctx, d, []string{"backup", "--all", "--healthcheck-url", srv.URL})
	require.Equal(t, exitInterrupt, code, "%s%s", out.String(), errb.String())
	assert.NotContains(t, errb.String(), "== bob@example.org", "bob's run never started")
	_, err := os.Stat(filepath.Join(fam.dirs["bob"], "B", "b.jpg"))
	assert.True(t, os.IsNotExist(err))
	assert.Equal(t, []string{"GET /start", "POST /fail"}, log.pings)
	assert.True(t, strings.HasPrefix(log.bodies[1], "exit code 130\nINTERRUPTED (exit code 130): Total for 1 of 2 folders"), log.bodies[1])
	assert.Contains(t, out.String(), "Total for 1 of 2 folders")
}
