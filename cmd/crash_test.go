//go:build unix

package cmd

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
)

// crashLibrary is what the crash test backs up: two albums of several
// pages, a file in both, a live photo, and multi-chunk files. expected maps
// each final path to its bytes.
type crashLibrary struct {
	s        *enteapitest.Server
	u        *enteapitest.User
	a, b     *enteapitest.Album
	files    []*enteapitest.File
	expected map[string][]byte
}

func newCrashLibrary(t *testing.T) *crashLibrary {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{PageSize: 3})
	t.Cleanup(s.Close)
	u := s.AddUser("crash@example.org", "crash password", enteapitest.UserOptions{})
	l := &crashLibrary{s: s, u: u, a: u.AddAlbum("Album A"), b: u.AddAlbum("Album B"), expected: map[string][]byte{}}
	for i := 0; i < 5; i++ {
		l.add(l.a, fmt.Sprintf("a%d.jpg", i), int64(1000*(i+1)), byte(i))
	}
	l.add(l.a, "video.mp4", 9<<20+3, 40)
	both := l.add(l.b, "both.jpg", 5000, 41)
	l.a.Add(both)
	l.expected["Album A/both.jpg"] = both.Plaintext()
	live := l.b.AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("moving"))})
	l.files = append(l.files, live)
	l.expected["Album B/live.heic"], l.expected["Album B/live.mov"] = []byte("still"), []byte("moving")
	for i := 0; i < 3; i++ {
		l.add(l.b, fmt.Sprintf("b%d.jpg", i), int64(700*(i+1)), byte(50+i))
	}
	return l
}

func (l *crashLibrary) add(a *enteapitest.Album, title string, size int64, seed byte) *enteapitest.File {
	f := a.AddFile(enteapitest.FileSpec{Title: title, Size: size, Seed: seed})
	l.files = append(l.files, f)
	folder := map[*enteapitest.Album]string{l.a: "Album A", l.b: "Album B"}[a]
	l.expected[folder+"/"+title] = f.Plaintext()
	return f
}

// change makes the next run do more than download: a renamed album, an
// edited caption, a new multi-chunk file.
func (l *crashLibrary) change() {
	l.b.Rename("Album B renamed")
	for p, b := range l.expected {
		if strings.HasPrefix(p, "Album B/") {
			delete(l.expected, p)
			l.expected["Album B renamed/"+strings.TrimPrefix(p, "Album B/")] = b
		}
	}
	l.files[0].Edit(func(s *enteapitest.FileSpec) { s.Caption = "edited" })
	f := l.a.AddFile(enteapitest.FileSpec{Title: "new.mp4", Size: 4<<20 + 99, Seed: 60})
	l.files = append(l.files, f)
	l.expected["Album A/new.mp4"] = f.Plaintext()
}

// media lists the files in dir outside .quak and .meta, with their bytes.
func media(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == folder.StateDir || d.Name() == ".meta") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[filepath.ToSlash(rel)] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestKilledAtSeededMomentsThenCompleted kills a real quak process with
// SIGKILL at 24 seeded moments (listing an album, inside a file, between a
// saved file's rename and its page's commit, after an album's folder moved)
// and then lets a new run finish. After each: the folder holds exactly the
// library, byte for byte, with no temp file and no second copy of an
// interrupted file, and quak verify agrees with the state.
func TestKilledAtSeededMomentsThenCompleted(t *testing.T) {
	bin := buildQuak(t)
	rng := rand.New(rand.NewPCG(2026, 12))
	for moment := 0; moment < 24; moment++ {
		t.Run(fmt.Sprint(moment), func(t *testing.T) {
			l := newCrashLibrary(t)
			e := newEnv(t)
			if code, _, errOut := e.run("login", "--email", l.u.Email, "--endpoint", l.s.URL(), "--password-file", passwordFile(t, l.u.Password, 0o600)); code != 0 {
				t.Fatal(errOut)
			}
			dir := t.TempDir()
			if moment%2 == 1 { // half the moments interrupt an update of an existing backup
				if code, _, errOut := e.run("backup", dir); code != 0 {
					t.Fatal(errOut)
				}
				l.change()
			}
			what := crashPoint(t, rng, l, moment%2 == 1)
			signalWhenStalled(t, bin, e, l.s, syscall.SIGKILL, "backup", "--concurrency", "1", dir)

			if code, out, errOut := e.run("backup", dir); code != 0 {
				t.Fatalf("after a kill %s: rerun exit %d\n%s%s", what, code, out, errOut)
			}
			got := media(t, dir)
			var extra, missing []string
			for p, b := range got {
				want, ok := l.expected[p]
				switch {
				case !ok:
					extra = append(extra, p)
				case string(b) != string(want):
					t.Errorf("after a kill %s: %s differs from the library", what, p)
				}
			}
			for p := range l.expected {
				if _, ok := got[p]; !ok {
					missing = append(missing, p)
				}
			}
			sort.Strings(extra)
			sort.Strings(missing)
			if len(extra)+len(missing) > 0 {
				t.Fatalf("after a kill %s: extra %v (temp files or second copies), missing %v", what, extra, missing)
			}
			if n := countTemps(t, dir); n != 0 {
				t.Fatalf("after a kill %s: %d temp files", what, n)
			}
			if code, out, errOut := e.run("verify", dir); code != 0 {
				t.Fatalf("after a kill %s: the state and the disk disagree\n%s%s", what, out, errOut)
			}
		})
	}
}

// crashPoint scripts a stall at a seeded point of the next run and says
// which. Runs use concurrency 1, so a stall freezes quak right there.
func crashPoint(t *testing.T, rng *rand.Rand, l *crashLibrary, update bool) string {
	t.Helper()
	store := func(f *enteapitest.File) string { return fmt.Sprintf("GET /store/%d/file-%d", l.u.ID, f.ID) }
	switch kind := rng.IntN(4); kind {
	case 0: // listing: the k-th page of an album's files
		k := rng.IntN(2)
		l.s.Inject("GET /collections/v2/diff", append(enteapitest.Repeat(enteapitest.Pass(), k), enteapitest.StallHeaders())...)
		return fmt.Sprintf("while listing page %d", k+1)
	case 1: // inside a file, at a seeded byte
		f := l.files[rng.IntN(len(l.files))]
		if update {
			f = l.files[len(l.files)-1] // the new file: the others are saved already
		}
		n := rng.Int64N(int64(len(f.Plaintext())) + 1)
		l.s.Inject(store(f), enteapitest.StallAfter(n))
		return fmt.Sprintf("%d bytes into file %d", n, f.ID)
	case 2: // a later file of the same page: earlier ones renamed, not committed
		f := l.files[1+rng.IntN(2)]
		if update {
			f = l.files[len(l.files)-1]
		}
		l.s.Inject(fmt.Sprintf("GET /files/download/%d", f.ID), enteapitest.StallHeaders())
		return fmt.Sprintf("before file %d, after its page's earlier files were renamed and their sidecars written", f.ID)
	default: // after the album listing, in the second album (renamed in updates)
		l.s.Inject("GET /collections/v2/diff", enteapitest.Pass(), enteapitest.StallHeaders())
		return "after the first album, as the second (renamed) album is listed"
	}
}

// A SIGKILL in the middle of a large file: the next run takes it up from
// the last recorded chunk or later (what the killed run wrote past it and
// logged is rolled forward, so its Range may start a few chunks on, never
// before) and the file ends byte-exact.
func TestKilledInALargeFileResumesNextRun(t *testing.T) {
	bin := buildQuak(t)
	e, s, u, dir := loggedIn(t)
	f := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 3})
	route := fmt.Sprintf("GET /store/%d/file-%d", u.ID, f.ID)
	s.Inject(route, enteapitest.StallAfter(18<<20))
	cmd := exec.Command(bin, "backup", "--resume-above", fmt.Sprint(8<<20), dir)
	cmd.Env = append(os.Environ(), "QUAK_CONFIG_DIR="+e.vars["QUAK_CONFIG_DIR"])
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitStalled(t, s)
	// The client lags the server's stall by what the socket buffers held:
	// once three chunks are in the temp file, the point after the second
	// is recorded.
	waitFor(t, "three chunks in the temp file", func() bool { return tempBytes(dir) >= 3*(4<<20) })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	// Where the killed run had got to, as it recorded it.
	st, err := folder.At(dir).OpenStateReadOnly()
	if err != nil {
		t.Fatal(err)
	}
	points, err := st.Resumes()
	_ = st.Close()
	if err != nil || len(points) != 1 {
		t.Fatalf("resume points %v, %v", points, err)
	}
	var rp download.ResumePoint
	if err := json.Unmarshal(points[f.ID], &rp); err != nil {
		t.Fatal(err)
	}
	wire := int64(4<<20 + 17)
	if rp.Offset < 2*wire || rp.Offset%wire != 0 {
		t.Fatalf("recorded offset %d: want a whole number of chunks, at least 2", rp.Offset)
	}
	if code, out, errOut := e.run("backup", "--resume-above", fmt.Sprint(8<<20), dir); code != 0 {
		t.Fatalf("rerun: code %d\n%s%s", code, out, errOut)
	}
	got := s.Ranges(route)
	end := (int64(len(f.Plaintext())) + 4<<20 - 1) / (4 << 20) * wire
	var from int64
	if len(got) != 2 {
		t.Fatalf("ranges %q, want one first request and one ranged rerun", got)
	}
	if _, err := fmt.Sscanf(got[1], "bytes=%d-", &from); err != nil || from < rp.Offset || from%wire != 0 || from >= end {
		t.Fatalf("ranges %q, want the rerun to ask from a whole chunk at or after the recorded one (%d), before the end", got, rp.Offset)
	}
	b, err := os.ReadFile(filepath.Join(dir, "Videos", "long.mp4"))
	if err != nil || string(b) != string(f.Plaintext()) {
		t.Fatalf("the resumed file is not byte-exact: %v", err)
	}
	if n := countTemps(t, dir); n != 0 {
		t.Fatalf("%d temp files left", n)
	}
}

// A SIGKILLed helper loses nothing: killed after one file's commit but
// before it was read back, the rerun sees that file fixed and repairs the
// rest; every repairable file is committed exactly once in all.
func TestFixThumbnailsKilledAndRerun(t *testing.T) {
	bin := buildQuak(t)
	e, s, u, _ := loggedIn(t)
	a := u.AddAlbum("A")
	first, second, third := lostThumb(t, a, "1.jpg"), lostThumb(t, a, "2.jpg"), lostThumb(t, a, "3.jpg")
	// The second file's check (two reads: one 404 proves no loss) passes;
	// its read-back after the commit stalls.
	s.Inject(fmt.Sprintf("GET /files/preview/%d", second.ID), enteapitest.Pass(), enteapitest.Pass(), enteapitest.StallHeaders())

	signalWhenStalled(t, bin, e, s, syscall.SIGKILL, "helper", "fix-missing-thumbnails", "--concurrency", "1", "--recheck-wait", "1ns")
	if n := s.Requests("PUT /files/thumbnail"); n != 2 {
		t.Fatalf("%d commits before the kill, want 2", n)
	}

	code, out, errOut := e.run("helper", "fix-missing-thumbnails")
	if code != 0 || !strings.Contains(out, "3 owned files checked: 2 ok, 1 lost; 1 repaired") {
		t.Fatalf("rerun: code %d\n%s%s", code, out, errOut)
	}
	for _, f := range []*enteapitest.File{first, second, third} {
		if _, ok := f.Thumbnail(); !ok {
			t.Fatalf("file %d still has no thumbnail", f.ID)
		}
	}
	if n := s.Requests("PUT /files/thumbnail"); n != 3 {
		t.Fatalf("%d commits in all, want exactly one per file", n)
	}
	if n := s.ExactRepeats(); n != 0 {
		t.Fatalf("%d exact repeats of a commit", n)
	}
}

// tempBytes is the size of the largest temp file in DIR's temp area.
func tempBytes(dir string) int64 {
	entries, _ := os.ReadDir(folder.At(dir).Temp())
	var n int64
	for _, d := range entries {
		if fi, err := d.Info(); err == nil && strings.HasPrefix(d.Name(), durable.TempPrefix) {
			n = max(n, fi.Size())
		}
	}
	return n
}

// waitFor waits until cond holds, failing the test after 30 seconds: for
// what a separate process does, which no event of the test's own tells.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}
