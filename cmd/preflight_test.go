package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A missing folder, another account's folder and a too-small disk each
// exit 5 before any download.
func TestBackupPreflightExits5BeforeDownloading(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 20 << 20})

	code, _, errOut := e.run("backup", filepath.Join(dir, "unmounted"))
	if code != 5 || !strings.Contains(errOut, "--init") {
		t.Fatalf("missing folder: code %d, %q", code, errOut)
	}

	e.freeSpace = func(string) (int64, error) { return 50 << 20, nil }
	code, _, errOut = e.run("backup", dir)
	if code != 5 || !strings.Contains(errOut, "needs 20.0 MiB") || !strings.Contains(errOut, "--no-space-check") {
		t.Fatalf("small disk: code %d, %q", code, errOut)
	}
	if n := s.RequestsWithPrefix("GET /store/"); n != 0 {
		t.Fatalf("%d downloads before refusing", n)
	}
	if code, _, errOut := e.run("backup", "--no-space-check", dir); code != 0 {
		t.Fatalf("--no-space-check: code %d, %q", code, errOut)
	}

	other := newEnv(t)
	o := s.AddUser("bob@example.org", "bob's password", enteapitest.UserOptions{})
	if code, _, errOut := other.run("login", "--email", o.Email, "--endpoint", s.URL(), "--password-file", passwordFile(t, o.Password, 0o600)); code != 0 {
		t.Fatal(errOut)
	}
	downloads := s.RequestsWithPrefix("GET /store/")
	code, _, errOut = other.run("backup", dir)
	if code != 5 || !strings.Contains(errOut, "is the backup of "+u.Email+" on "+s.URL()+" (user ") ||
		!strings.Contains(errOut, "not of "+o.Email+" on "+s.URL()+" (user ") || s.RequestsWithPrefix("GET /store/") != downloads {
		t.Fatalf("another account's folder: code %d, %q", code, errOut)
	}
}

func TestBackupInitCreatesTheFolder(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	target := filepath.Join(dir, "new", "photos")
	if code, _, errOut := e.run("backup", "--init", target); code != 0 {
		t.Fatalf("code %d, %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(target, "A", "x.jpg")); err != nil {
		t.Fatal(err)
	}
}

func TestFilterFlags(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("Trip")
	a.AddFile(enteapitest.FileSpec{Title: "clip.mp4", FileType: 1, Size: 10})
	a.AddFile(enteapitest.FileSpec{Title: "pic.jpg", Size: 10})
	u.AddAlbum("Work").AddFile(enteapitest.FileSpec{Title: "doc.jpg", Size: 10})
	code, out, errOut := e.run("backup", "--albums", "tr*", "--skip-videos", dir)
	if code != 0 || !strings.Contains(out, "1 new") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	for name, want := range map[string]bool{"Trip/pic.jpg": true, "Trip/clip.mp4": false, "Work/doc.jpg": false} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Fatalf("%s: exists %v, want %v", name, err == nil, want)
		}
	}
	code, out, errOut = e.run("backup", "--albums", "tr*", "--skip-videos", dir)
	if code != 0 || !strings.Contains(out, "1 left out by filters (and 1 album not taken)") {
		t.Fatalf("a later real run still says what the filters leave out: code %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = e.run("backup", "--albums", "Tri", dir)
	if code != exitUsage || !strings.HasPrefix(out, "FAILED (exit code 64)") || !strings.Contains(errOut, `--albums "Tri" matches no album; nearest: "Trip", "Work"`) {
		t.Fatalf("a pattern that matches nothing: code %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut = e.run("backup", "--dry-run", "--albums", "Holidays", dir); code != exitUsage || !strings.Contains(errOut, "matches no album") {
		t.Fatalf("dry run too: code %d, %s", code, errOut)
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--albums", "[x"}, {"--since", "2024-02-01", "--until", "2024-01-01"}} {
		if code, _, _ := e.run(append([]string{"backup"}, append(bad, dir)...)...); code != 64 {
			t.Fatalf("%v: code %d", bad, code)
		}
	}
}
