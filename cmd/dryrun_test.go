package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

func TestBackupDryRunAndMetadataOnly(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 2048})
	var log pingLog
	e.vars["QUAK_HEALTHCHECK_URL"] = log.server(t).URL

	code, out, errOut := e.run("backup", "--dry-run", dir)
	if code != 0 || !strings.Contains(errOut, "would download: "+filepath.Join("A", "x.jpg")+" (2.0 KiB)") ||
		!strings.HasPrefix(out, "Dry run, nothing written; a real run would make: 1 new") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 || s.RequestsWithPrefix("GET /store/") != 0 || len(log.pings) != 0 {
		t.Fatalf("a dry run wrote %d entries, downloaded or pinged (%v)", len(entries), log.pings)
	}
	code, out, _ = e.run("backup", "--dry-run", "--json", dir)
	if objs := jsonLinesOf(t, out); len(ofType(objs, "saved")) != 0 || len(ofType(objs, "would-save")) == 0 {
		t.Fatalf("a dry run saves nothing, and says so: %q", out)
	}
	if sum := ofType(jsonLinesOf(t, out), "summary"); code != 0 || len(sum) != 1 || sum[0]["dryRun"] != true {
		t.Fatalf("code %d, %v", code, sum)
	}
	if code, _, _ := e.run("backup", "--dry-run", "--verify", dir); code != 64 {
		t.Fatalf("--dry-run --verify: code %d", code)
	}

	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	sidecar := filepath.Join(dir, "A", ".meta", "x.jpg.json")
	if err := os.Remove(sidecar); err != nil {
		t.Fatal(err)
	}
	f.Edit(func(s *enteapitest.FileSpec) { s.Caption = "hello" })
	downloads := s.RequestsWithPrefix("GET /store/")
	code, out, errOut = e.run("backup", "--metadata-only", dir)
	if code != 0 || !strings.Contains(out, "1 metadata update,") || s.RequestsWithPrefix("GET /store/") != downloads {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if b, err := os.ReadFile(sidecar); err != nil || !strings.Contains(string(b), "hello") {
		t.Fatalf("sidecar not refreshed: %v", err)
	}
}
