package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

func TestPruneAndPruneTrash(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10})
	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	f.Trash()
	day := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return day }
	if code, _, _ := e.run("backup", "--prune", "--max-delete", "0", dir); code != 64 {
		t.Fatalf("--max-delete 0: code %d", code)
	}
	code, out, errOut := e.run("backup", "--prune", "--dry-run", "--json", dir)
	if code != 0 || !strings.Contains(errOut, "would move to the trash (deleted on the server): "+filepath.Join("A", "x.jpg")) {
		t.Fatalf("dry run: code %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = e.run("backup", "--prune", "--json", dir)
	if code != 0 || !strings.Contains(errOut, "moved to the trash (deleted on the server): "+filepath.Join("A", "x.jpg")) {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if p := ofType(jsonLinesOf(t, out), "pruned"); len(p) != 1 || p[0]["path"] != filepath.Join("A", "x.jpg") {
		t.Fatalf("pruned events: %v", p)
	}
	trashed := filepath.Join(folder.At(dir).Trash(), "2026-06-01", "A", "x.jpg")
	if _, err := os.Stat(trashed); err != nil {
		t.Fatal(err)
	}
	e.now = func() time.Time { return day.AddDate(0, 0, 10) }
	if code, out, _ := e.run("prune-trash", dir); code != 0 || !strings.Contains(out, "Nothing") {
		t.Fatalf("too young to go: code %d, %q", code, out)
	}
	e.now = func() time.Time { return day.AddDate(0, 0, 31) }
	if code, out, _ := e.run("prune-trash", "--older-than", "30d", dir); code != 0 || !strings.Contains(out, "2026-06-01") {
		t.Fatalf("code %d, %q", code, out)
	}
	if _, err := os.Stat(trashed); !os.IsNotExist(err) {
		t.Fatal("the trash was not emptied")
	}
	if _, err := os.Stat(filepath.Join(dir, "A", "y.jpg")); err != nil {
		t.Fatal("a live file was touched")
	}
	if code, _, _ := e.run("prune-trash", "--older-than", "soon", dir); code != 64 {
		t.Fatalf("bad age: code %d", code)
	}
}

// A refused prune says what it would have moved, on stderr and as JSON.
func TestRefusedPruneListsWhatWouldMove(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	x := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	y := a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10})
	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	x.Trash()
	y.Trash()
	code, out, errOut := e.run("backup", "--prune", "--max-delete", "1", "--json", dir)
	if code != 0 || !strings.Contains(errOut, "not pruning: 2 album entries") ||
		!strings.Contains(errOut, "would have moved to the trash: "+filepath.Join("A", "y.jpg")) {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	would := ofType(jsonLinesOf(t, out), "would-prune")
	if len(would) != 2 || would[0]["path"] != filepath.Join("A", "x.jpg") || would[0]["fileID"] != float64(x.ID) {
		t.Fatalf("would-prune events: %v", would)
	}
	if _, err := os.Stat(filepath.Join(dir, "A", "x.jpg")); err != nil {
		t.Fatal("a refused prune moved a file")
	}
}
