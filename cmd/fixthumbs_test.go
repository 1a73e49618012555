package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// realJPEG is a w×h JPEG original to make thumbnails from.
// blackJPEG is an all-black w×h JPEG padded after its end (decoders ignore
// that) to 100 KiB, so the recorded size leaves room for a real thumbnail.
func blackJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewRGBA(image.Rect(0, 0, w, h)), &jpeg.Options{Quality: 70}); err != nil {
		t.Fatal(err)
	}
	return append(b.Bytes(), make([]byte, 100<<10-b.Len())...)
}

func realJPEG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{byte(x), byte(y), byte(x ^ y), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// lostThumb adds a file whose thumbnail's bytes are gone, with a roomy size
// on record.
func lostThumb(t *testing.T, a *enteapitest.Album, title string) *enteapitest.File {
	t.Helper()
	return a.AddFile(enteapitest.FileSpec{Title: title, Data: realJPEG(t, 320, 240), LostThumbnail: true, Thumbnail: make([]byte, 100<<10)})
}

func TestHelperIsAGroup(t *testing.T) {
	code, out, _ := newEnv(t).run("helper")
	if code != 0 || !strings.Contains(out, "fix-missing-thumbnails") {
		t.Fatalf("code %d, %q", code, out)
	}
	code, out, _ = newEnv(t).run("helper", "fix-missing-thumbnails", "--help")
	if code != 0 || !strings.Contains(out, "--dry-run") || !strings.Contains(out, "changes your account") {
		t.Fatalf("code %d, %q", code, out)
	}
}

func TestFixThumbnailsDryRunThenRepair(t *testing.T) {
	e, s, u, _ := loggedIn(t)
	a := u.AddAlbum("Trip")
	f := lostThumb(t, a, "beach.jpg")
	a.AddFile(enteapitest.FileSpec{Title: "fine.jpg", Data: []byte("x")})

	code, out, errOut := e.run("helper", "fix-missing-thumbnails", "--dry-run")
	if code != 0 || !strings.Contains(out, "1 would-repair") || !strings.Contains(out, "Dry run") {
		t.Fatalf("dry run: code %d\n%s%s", code, out, errOut)
	}
	if n := s.Requests("PUT /files/thumbnail"); n != 0 {
		t.Fatalf("a dry run committed %d thumbnails", n)
	}
	code, out, errOut = e.run("helper", "fix-missing-thumbnails")
	if code != 0 || !strings.Contains(out, "2 owned files checked: 1 ok, 1 lost; 1 repaired") {
		t.Fatalf("repair: code %d\n%s%s", code, out, errOut)
	}
	if want := fmt.Sprintf("lost, repaired: Trip / beach.jpg (file %d)", f.ID); !strings.Contains(errOut, want) {
		t.Fatalf("no line for the repaired file: %q", errOut)
	}
	if _, ok := f.Thumbnail(); !ok {
		t.Fatal("the server still has no thumbnail")
	}
}

func TestFixThumbnailsStormExits2(t *testing.T) {
	e, s, u, _ := loggedIn(t)
	f := lostThumb(t, u.AddAlbum("A"), "x.jpg")
	s.Inject(fmt.Sprintf("GET /files/preview/%d", f.ID), enteapitest.Repeat(enteapitest.Status(503), 10)...)
	code, out, errOut := e.run("helper", "fix-missing-thumbnails")
	if code != 2 || !strings.Contains(out, "1 unknown") || !strings.Contains(errOut, "unknown, reported") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if n := s.Requests("PUT /files/thumbnail"); n != 0 {
		t.Fatalf("a storm led to %d commits", n)
	}
}

func TestFixThumbnailsJSON(t *testing.T) {
	e, _, u, _ := loggedIn(t)
	a := u.AddAlbum("A")
	ok := a.AddFile(enteapitest.FileSpec{Title: "ok.jpg", Data: []byte("x")})
	big := a.AddFile(enteapitest.FileSpec{Title: "big.jpg", Data: realJPEG(t, 300, 200), LostThumbnail: true, Thumbnail: make([]byte, 100)})
	code, out, errOut := e.run("helper", "fix-missing-thumbnails", "--json")
	if code != 2 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	byFile := map[int64]map[string]any{}
	var summary map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var obj map[string]any
		if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if _, err := time.Parse(time.RFC3339Nano, fmt.Sprint(obj["time"])); err != nil {
			t.Fatalf("no time: %v", obj)
		}
		switch obj["type"] {
		case "thumbnail":
			byFile[int64(obj["fileID"].(float64))] = obj
		case "summary":
			summary = obj
		default:
			t.Fatalf("unknown type: %v", obj)
		}
	}
	if o := byFile[ok.ID]; o["class"] != "ok" || o["action"] != "none" || o["error"] != nil || o["album"] != "A" {
		t.Fatalf("ok file: %v", o)
	}
	if b := byFile[big.ID]; b["class"] != "lost" || b["action"] != "too-large" || b["error"] == nil || b["recordedSize"] != float64(117) {
		t.Fatalf("too-large file: %v", b)
	}
	if summary == nil || summary["owned"] != float64(2) || summary["exitCode"] != float64(2) || summary["healthy"] != false {
		t.Fatalf("summary: %v", summary)
	}
	if p := summary["problems"].([]any); len(p) != 1 || p[0] != float64(big.ID) {
		t.Fatalf("problems: %v", p)
	}
}

func TestFixThumbnailsUsage(t *testing.T) {
	for _, args := range [][]string{{"--limit", "-1"}, {"--albums", "[x"}, {"extra"}} {
		code, _, errOut := newEnv(t).run(append([]string{"helper", "fix-missing-thumbnails"}, args...)...)
		if code != 64 {
			t.Fatalf("%v: code %d, %q", args, code, errOut)
		}
	}
	if code, _, _ := newEnv(t).run("helper", "fix-missing-thumbnails"); code != 3 {
		t.Fatalf("not logged in: code %d", code)
	}
}

// waitStalled waits until the fake server holds a stalled request, or
// fails the test after a bound instead of hanging the suite.
func waitStalled(t *testing.T, s *enteapitest.Server) {
	t.Helper()
	select {
	case <-s.Stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("the server never saw the request it was to stall")
	}
}

// --check-content and --ids: each flagged file is a line of its own in
// --json with its fileID and class; only the files named are checked; on a
// terminal a progress bar counts the files.
func TestFixThumbnailsCheckContentAndIDs(t *testing.T) {
	e, s, u, _ := loggedIn(t)
	a := u.AddAlbum("A")
	orig := realJPEG(t, 300, 200)
	black := a.AddFile(enteapitest.FileSpec{Title: "black.jpg", Data: orig, Thumbnail: blackJPEG(t, 300, 200)})
	other := a.AddFile(enteapitest.FileSpec{Title: "other.jpg", Data: orig, Thumbnail: blackJPEG(t, 300, 200)})
	code, out, errOut := e.run("helper", "fix-missing-thumbnails", "--dry-run", "--json", "--ids", fmt.Sprint(black.ID))
	if code != 0 || !strings.Contains(out, `"class":"ok"`) || strings.Contains(out, fmt.Sprint(other.ID)) {
		t.Fatalf("without --check-content a black thumbnail is ok, and --ids checks one file: code %d\n%s%s", code, out, errOut)
	}
	e.terminal = true
	code, out, errOut = e.run("helper", "fix-missing-thumbnails", "--json", "--check-content", "--ids", fmt.Sprint(black.ID))
	if code != 0 || !strings.Contains(out, fmt.Sprintf(`"class":"blank","error":null,"fileID":%d`, black.ID)) ||
		!strings.Contains(out, `"action":"repaired"`) {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "checking thumbnails") {
		t.Fatalf("no progress bar on a terminal:\n%s", errOut)
	}
	if n := s.Requests("PUT /files/thumbnail"); n != 1 {
		t.Fatalf("%d commits, want 1", n)
	}
	if code, _, errOut := e.run("helper", "fix-missing-thumbnails", "--ids", "0"); code != exitUsage {
		t.Fatalf("--ids 0: code %d\n%s", code, errOut)
	}
}

// An object store that answers 404 for every thumbnail is an outage, not a
// mass loss: nothing is replaced, and the run exits 75 saying why.
func TestFixThumbnailsStoreWide404Exits75AndRepairsNothing(t *testing.T) {
	e, s, u, _ := loggedIn(t)
	a := u.AddAlbum("A")
	for i := range 4 {
		a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Data: realJPEG(t, 320, 240), Thumbnail: realJPEG(t, 64, 48)})
	}
	s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if strings.HasPrefix(route, "GET /store/") && strings.Contains(route, "/thumb-") {
			return enteapitest.Status(404), true
		}
		return enteapitest.Fault{}, false
	})
	code, out, errOut := e.run("helper", "fix-missing-thumbnails")
	if code != exitTempFail || !strings.Contains(errOut, "object store looks unavailable") {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if n := s.Requests("PUT /files/thumbnail"); n != 0 {
		t.Fatalf("%d thumbnails replaced", n)
	}
}
