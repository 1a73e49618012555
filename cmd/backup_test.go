package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// loggedIn is an env logged in to a fake server with a small library.
func loggedIn(t *testing.T) (*env, *enteapitest.Server, *enteapitest.User, string) {
	t.Helper()
	s, u := fakeServer(t, enteapitest.UserOptions{})
	e := newEnv(t)
	if code, _, errOut := e.run("login", "--email", u.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, u.Password, 0o600)); code != exitOK {
		t.Fatal(errOut)
	}
	dir := filepath.Join(t.TempDir(), "backup")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return e, s, u, dir
}

func TestBackupSavesAndSummarises(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("Holidays")
	f := a.AddFile(enteapitest.FileSpec{Title: "beach.jpg", Size: 1000, Seed: 1})
	code, out, errOut := e.run("backup", dir)
	if code != exitOK {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "Holidays", "beach.jpg"))
	if err != nil || string(b) != string(f.Plaintext()) {
		t.Fatalf("saved file: %v", err)
	}
	if !strings.Contains(out, "1 new") || !strings.Contains(out, "0 failed") {
		t.Fatalf("summary: %q", out)
	}
	code, out, _ = e.run("backup", dir)
	if code != exitOK || !strings.Contains(out, "0 new") || !strings.Contains(out, "1 unchanged") {
		t.Fatalf("second run: code %d, %q", code, out)
	}
}

func TestBackupPartialFailureExits2(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Size: 10, Seed: 1})
	bad := a.AddFile(enteapitest.FileSpec{Title: "broken.jpg", Size: 10, Seed: 2})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.FlipAt(3))
	code, out, errOut := e.run("backup", dir)
	if code != exitPartial {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	want := fmt.Sprintf("failed: Trip / broken.jpg (file %d): ", bad.ID)
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "corrupted or tampered") {
		t.Fatalf("failure line missing: %q", errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "Trip", "ok.jpg")); err != nil {
		t.Fatal("the good file was not saved")
	}
}

func TestBackupReportsRetries(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	f := u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	s.Inject(fmt.Sprintf("GET /files/download/%d", f.ID), enteapitest.Status(503))
	code, _, errOut := e.run("backup", "-v", dir)
	if code != exitOK || !strings.Contains(errOut, "attempt 1 failed, retrying in") || !strings.Contains(errOut, "HTTP 503") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if strings.Contains(errOut, "token=") {
		t.Fatalf("a retry line shows the token: %q", errOut)
	}
	if !strings.Contains(errOut, "downloaded: A/x.jpg") {
		t.Fatalf("-v names each file's decision: %q", errOut)
	}
	g := u.AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
	s.Inject(fmt.Sprintf("GET /files/download/%d", g.ID), enteapitest.Status(503))
	if code, _, errOut = e.run("backup", dir); code != exitOK || errOut != "" {
		t.Fatalf("without -v a retry that succeeds says nothing: code %d, %q", code, errOut)
	}
}

// -q prints nothing at all when the run succeeds, and everything, the
// summary included, when it does not.
func TestBackupQuiet(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	for range 2 {
		if code, out, errOut := e.run("backup", "-q", dir); code != exitOK || out != "" || errOut != "" {
			t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
		}
	}
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 10, Seed: 2})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(3), 5)...)
	code, out, errOut := e.run("backup", "--quiet", dir)
	if code != exitPartial || !strings.Contains(out, "1 failed") || !strings.Contains(errOut, "failed: A / bad.jpg") || !strings.Contains(errOut, "quak: error:") {
		t.Fatalf("a failed quiet run shows everything: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, _ := e.run("backup", "-q", "-v", dir); code != exitUsage {
		t.Fatalf("-q with -v: code %d", code)
	}
	log := filepath.Join(t.TempDir(), "status.log")
	code, out, _ = e.run("status", "--offline", "--log-file", log, dir)
	b, _ := os.ReadFile(log)
	if code != exitPartial || !strings.Contains(string(b), "Backup:") || !strings.Contains(out, "Backup:") || !strings.Contains(string(b), "quak: error:") {
		t.Fatalf("--log-file works for status too: code %d, log %q", code, b)
	}
}

func TestBackupExitCodes(t *testing.T) {
	t.Run("not logged in", func(t *testing.T) {
		code, _, errOut := newEnv(t).run("backup", t.TempDir())
		if code != exitLogin || !strings.Contains(errOut, "quak login") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("session rejected", func(t *testing.T) {
		e, s, _, dir := loggedIn(t)
		s.Inject("GET /collections/v2", enteapitest.StatusBody(401, `{"error":"token expired"}`))
		if code, _, errOut := e.run("backup", dir); code != exitLogin {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("missing folder", func(t *testing.T) {
		e, _, _, dir := loggedIn(t)
		if code, _, errOut := e.run("backup", filepath.Join(dir, "nope")); code != exitUnusableDir || !strings.Contains(errOut, "does not exist") {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("locked", func(t *testing.T) {
		e, _, _, dir := loggedIn(t)
		if code, _, _ := e.run("backup", dir); code != exitOK {
			t.Fatal("first run failed")
		}
		release := holdLock(t, dir)
		defer release()
		if code, _, errOut := e.run("backup", dir); code != exitLocked {
			t.Fatalf("code %d, %q", code, errOut)
		}
	})
	t.Run("usage", func(t *testing.T) {
		if code, _, _ := newEnv(t).run("backup"); code != exitUsage {
			t.Fatalf("code %d", code)
		}
	})
}

func TestBackupHelpListsExitCodes(t *testing.T) {
	_, out, _ := newEnv(t).run("backup", "--help")
	words := strings.Join(strings.Fields(out), " ")
	for _, code := range []string{"0 everything saved", "2 some files failed", "3 not logged in", "4 another quak", "5 DIR is unusable"} {
		if !strings.Contains(words, code) {
			t.Fatalf("help lacks %q", code)
		}
	}
}

// holdLock takes DIR's lock as another quak run would.
func holdLock(t *testing.T, dir string) func() {
	t.Helper()
	unlock, err := folder.At(dir).Lock()
	if err != nil {
		t.Fatal(err)
	}
	return unlock
}
