package cmd

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// jsonLinesOf parses stdout as JSON lines, failing on anything else, and
// checks that every object has a type and an RFC 3339 time.
func jsonLinesOf(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var o map[string]any
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("stdout holds a line that is not JSON: %q", sc.Text())
		}
		if _, ok := o["type"].(string); !ok {
			t.Fatalf("no type: %v", o)
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(o["time"])); err != nil {
			t.Fatalf("no time: %v", o)
		}
		objs = append(objs, o)
	}
	return objs
}

func ofType(objs []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, o := range objs {
		if o["type"] == typ {
			out = append(out, o)
		}
	}
	return out
}

// hasKeys fails unless o has every key.
func hasKeys(t *testing.T, o map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := o[k]; !ok {
			t.Fatalf("%v lacks %q", o["type"], k)
		}
	}
}

func sessionToken(t *testing.T, e *env) string {
	t.Helper()
	b, err := os.ReadFile(e.sessionFile())
	if err != nil {
		t.Fatal(err)
	}
	return between(string(b), `"token": "`, `"`)
}

func TestBackupJSONEventsAndLastRun(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a, b := u.AddAlbum("A"), u.AddAlbum("B")
	saved := a.AddFile(enteapitest.FileSpec{Title: "saved.jpg", Size: 1000, Seed: 1})
	b.Add(saved)
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	edited := a.AddFile(enteapitest.FileSpec{Title: "edited.jpg", Size: 10, Seed: 3})
	// Damaged bytes fail at once (never retried); the next run saves it.
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.FlipAt(30))
	s.Inject(fmt.Sprintf("GET /files/download/%d", saved.ID), enteapitest.Status(503))

	code, out, errOut := e.run("backup", "--json", dir)
	if code != 2 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	objs := jsonLinesOf(t, out)
	for _, o := range ofType(objs, "saved") {
		hasKeys(t, o, "fileID", "collectionID", "album", "title", "path", "bytes")
	}
	if sv := ofType(objs, "saved"); len(sv) != 2 {
		t.Fatalf("saved events: %v", sv)
	}
	ln := ofType(objs, "linked")
	if len(ln) != 1 || ln[0]["fileID"] != float64(saved.ID) || ln[0]["album"] != "B" || ln[0]["path"] != filepath.Join("B", "saved.jpg") {
		t.Fatalf("linked: %v", ln)
	}
	fl := ofType(objs, "failed")
	if len(fl) != 1 || fl[0]["fileID"] != float64(bad.ID) || fl[0]["reason"] != "corrupt" || fl[0]["error"] == nil || fl[0]["title"] != "bad.jpg" {
		t.Fatalf("failed: %v", fl)
	}
	rt := ofType(objs, "retry")
	if len(rt) != 1 || rt[0]["attempt"] != float64(1) || !strings.Contains(fmt.Sprint(rt[0]["cause"]), "503") {
		t.Fatalf("retry: %v", rt)
	}
	hasKeys(t, rt[0], "delay")
	sums := ofType(objs, "summary")
	if len(sums) != 1 || objs[len(objs)-1]["type"] != "summary" {
		t.Fatal("the summary must be the last object, once")
	}
	sum := sums[0]
	hasKeys(t, sum, "started", "counts", "reasons", "bytes", "duration", "failedIDs", "exitCode")
	counts := sum["counts"].(map[string]any)
	for _, k := range []string{"new", "linked", "adopted", "metadata", "unchanged", "failed", "hashMismatches", "deletedOnServer", "albumsDeleted", "albumsFailed"} {
		if _, ok := counts[k]; !ok {
			t.Fatalf("counts lack %q", k)
		}
	}
	if counts["new"] != float64(2) || counts["failed"] != float64(1) || counts["linked"] != float64(1) || sum["exitCode"] != float64(2) ||
		sum["reasons"].(map[string]any)["corrupt"] != float64(1) || sum["bytes"] != float64(1010) {
		t.Fatalf("summary: %v", sum)
	}
	if ids := sum["failedIDs"].([]any); len(ids) != 1 || ids[0] != float64(bad.ID) {
		t.Fatalf("failedIDs: %v", ids)
	}
	if !strings.Contains(errOut, "1 failed") || !strings.Contains(errOut, "failed: A / bad.jpg") {
		t.Fatalf("the human lines belong on stderr: %q", errOut)
	}

	raw, err := os.ReadFile(folder.At(dir).LastRunPath())
	if err != nil {
		t.Fatal(err)
	}
	var last map[string]any
	if err := json.Unmarshal(raw, &last); err != nil {
		t.Fatal(err)
	}
	hasKeys(t, last, "start", "end", "outcome", "error", "email", "userID", "endpoint", "failures", "totalFiles", "totalBytes", "counts", "exitCode")
	if last["outcome"] != "partial" || last["exitCode"] != float64(2) || last["email"] != u.Email || last["totalFiles"] != float64(2) {
		t.Fatalf("last-run.json: %s", raw)
	}
	if f := last["failures"].([]any)[0].(map[string]any); f["reason"] != "corrupt" || f["fileID"] != float64(bad.ID) {
		t.Fatalf("failures: %v", f)
	}
	if _, err := os.Stat(folder.At(dir).LastSuccessPath()); !os.IsNotExist(err) {
		t.Fatal("a partial run is not a success")
	}

	// The next run: an edit, a rename and a deletion on the server.
	edited.Edit(func(f *enteapitest.FileSpec) { f.Caption = "new caption" })
	saved.Edit(func(f *enteapitest.FileSpec) { f.EditedName = "renamed.jpg" })
	a.Remove(edited)
	code, out, errOut = e.run("backup", "--json", dir)
	if code != 0 {
		t.Fatalf("second run: code %d\n%s%s", code, out, errOut)
	}
	objs = jsonLinesOf(t, out)
	for _, typ := range []string{"renamed", "metadata", "deleted-on-server", "saved"} {
		if len(ofType(objs, typ)) == 0 {
			t.Fatalf("no %s event in %s", typ, out)
		}
	}
	for _, secret := range []string{sessionToken(t, e), u.Password} {
		raw, _ := os.ReadFile(folder.At(dir).LastRunPath())
		if strings.Contains(out+errOut+string(raw), secret) {
			t.Fatal("a secret reached the output or last-run.json")
		}
	}
	if _, err := os.Stat(folder.At(dir).LastSuccessPath()); err != nil {
		t.Fatal("a clean run is recorded as the last success")
	}
}

func TestRefusedRunPrintsNoSummary(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	missing := filepath.Join(dir, "not-mounted")
	code, out, errOut := e.run("backup", missing)
	if code != 5 || out != "" || strings.Contains(errOut, "0 new") {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatal("quak created the missing folder")
	}
	code, out, _ = e.run("backup", "--json", missing)
	objs := jsonLinesOf(t, out)
	if code != 5 || len(objs) != 1 || objs[0]["started"] != false || objs[0]["exitCode"] != float64(5) {
		t.Fatalf("code %d, %v", code, objs)
	}
}

func TestLogFile(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(30), 5)...)
	log := filepath.Join(t.TempDir(), "quak.log")
	e.now = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }
	for i := 0; i < 2; i++ {
		if code, _, errOut := e.run("backup", "--log-file", log, dir); code != 2 {
			t.Fatalf("code %d: %s", code, errOut)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 {
		t.Fatalf("two runs of failure, summary and error lines, appended: %q", b)
	}
	at := "2026-03-04T05:06:07Z [backup " + dir + "] "
	for _, l := range lines {
		if !strings.HasPrefix(l, at+"quak: ") && !strings.HasPrefix(l, at+"INCOMPLETE (exit code 2): 0 new") {
			t.Fatalf("untimestamped line %q", l)
		}
	}
	if !strings.Contains(string(b), "failed: A / bad.jpg") || !strings.Contains(string(b), "quak: error:") {
		t.Fatalf("log: %s", b)
	}
	if strings.Contains(string(b), sessionToken(t, e)) {
		t.Fatal("the token reached the log")
	}
	if fi, _ := os.Stat(log); fi.Mode().Perm() != 0o600 {
		t.Fatalf("log mode %v", fi.Mode())
	}
}

func TestStatusExitCodes(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10})
	clock := time.Now()
	e.now = func() time.Time { return clock }

	if code, _, errOut := e.run("status", dir); code != 5 || !strings.Contains(errOut, "no recorded backup run") {
		t.Fatalf("before any run: code %d, %q", code, errOut)
	}
	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	code, out, errOut := e.run("status", dir)
	if code != 0 || !strings.Contains(out, "healthy") || !strings.Contains(out, "Session:       valid") || !strings.Contains(out, "In the backup: 1 file,") {
		t.Fatalf("fresh: code %d\n%s%s", code, out, errOut)
	}

	clock = clock.Add(37 * time.Hour)
	if code, out, _ := e.run("status", dir); code != 6 || !strings.Contains(out, "more than --max-age") {
		t.Fatalf("stale: code %d, %q", code, out)
	}
	if code, _, _ := e.run("status", "--max-age", "48h", dir); code != 0 {
		t.Fatalf("within a longer --max-age: code %d", code)
	}

	bad := a.AddFile(enteapitest.FileSpec{Title: "bad.jpg", Size: 100, Seed: 2})
	s.Inject(fmt.Sprintf("GET /store/%d/file-%d", u.ID, bad.ID), enteapitest.Repeat(enteapitest.FlipAt(30), 5)...)
	if code, _, _ := e.run("backup", dir); code != 2 {
		t.Fatal("expected a partial run")
	}
	code, out, _ = e.run("status", "--max-age", "48h", dir)
	if code != 2 || !strings.Contains(out, fmt.Sprintf("file %d, A / bad.jpg: corrupt", bad.ID)) {
		t.Fatalf("partial: code %d, %q", code, out)
	}

	s.Inject("GET /users/session-validity/v2", enteapitest.StatusBody(401, `{"error":"token expired"}`))
	if code, out, _ := e.run("status", "--max-age", "48h", dir); code != 3 || !strings.Contains(out, "rejected") {
		t.Fatalf("rejected session: code %d, %q", code, out)
	}
	requests := s.Requests("GET /users/session-validity/v2")
	code, out, _ = e.run("status", "--offline", "--json", "--max-age", "48h", dir)
	if code != 2 || s.Requests("GET /users/session-validity/v2") != requests {
		t.Fatalf("--offline: code %d, asked the server anyway", code)
	}
	objs := jsonLinesOf(t, out)
	if len(objs) != 1 || objs[0]["type"] != "status" {
		t.Fatalf("status --json: %v", objs)
	}
	hasKeys(t, objs[0], "dir", "email", "endpoint", "session", "lastRun", "lastSuccess", "failures", "totalFiles", "totalBytes", "freeBytes", "healthy", "problems", "exitCode")
	if objs[0]["exitCode"] != float64(2) || objs[0]["healthy"] != false || objs[0]["freeBytes"].(float64) <= 0 {
		t.Fatalf("status --json: %v", objs[0])
	}
}

func TestVerifyAndBackupVerify(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 5000, Seed: 1})
	a.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 50, Seed: 2})
	if code, _, _ := e.run("backup", dir); code != 0 {
		t.Fatal("backup failed")
	}
	if code, out, _ := e.run("verify", dir); code != 0 || !strings.Contains(out, "2 of 2 files checked") {
		t.Fatalf("clean verify: code %d, %q", code, out)
	}
	p := filepath.Join(dir, "A", "x.jpg")
	b, _ := os.ReadFile(p)
	b[4000] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run("verify", "--json", dir)
	if code != 2 || !strings.Contains(errOut, "changed: "+filepath.Join("A", "x.jpg")) {
		t.Fatalf("flipped byte: code %d\n%s%s", code, out, errOut)
	}
	objs := jsonLinesOf(t, out)
	pr := ofType(objs, "problem")
	if len(pr) != 1 || pr[0]["kind"] != "changed" || pr[0]["fileID"] != float64(f.ID) {
		t.Fatalf("problems: %v", pr)
	}
	sum := ofType(objs, "summary")[0]
	if sum["exitCode"] != float64(2) || sum["redownload"].([]any)[0] != float64(f.ID) {
		t.Fatalf("summary: %v", sum)
	}
	if code, out, errOut := e.run("backup", "--verify", dir); code != 0 || !strings.Contains(out, "1 restored (missing or changed here)") {
		t.Fatalf("backup --verify: code %d\n%s%s", code, out, errOut)
	}
	got, _ := os.ReadFile(p)
	if string(got) != string(f.Plaintext()) {
		t.Fatal("backup --verify did not restore the file")
	}
	if code, _, _ := e.run("verify", dir); code != 0 {
		t.Fatalf("verify after the repair: code %d", code)
	}
	if code, _, _ := e.run("verify", "--sample", "0", dir); code != 64 {
		t.Fatalf("--sample 0: code %d", code)
	}
	if code, _, _ := e.run("verify", t.TempDir()); code != 5 {
		t.Fatalf("no backup: code %d", code)
	}
}

// Exit codes are a documented interface: their numbers must not drift.
func TestExitCodeNumbers(t *testing.T) {
	got := map[string]int{"ok": exitOK, "fatal": exitFatal, "partial": exitPartial, "login": exitLogin, "locked": exitLocked,
		"dir": exitUnusableDir, "stale": exitStale, "usage": exitUsage, "interrupt": exitInterrupt, "terminated": exitTerminated}
	want := map[string]int{"ok": 0, "fatal": 1, "partial": 2, "login": 3, "locked": 4, "dir": 5, "stale": 6, "usage": 64,
		"interrupt": 130, "terminated": 143}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if got[k] != want[k] {
			t.Errorf("exit code %s is %d, documented as %d", k, got[k], want[k])
		}
	}
	if exitCodeFor(errors.New("x")) != 1 {
		t.Error("an unclassified error must exit 1")
	}
}
