//go:build unix

package cmd

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	tt "github.com/quak-photos/quak/restore/takeout/takeouttest"
)

// killTakeout is a Takeout of n originals: photos in year folders, some
// also in albums, favourites, a live photo, and two videos large enough
// to be uploaded as they are read; it returns the parts and the titles.
func killTakeout(t *testing.T, n int) ([]string, map[string]int) {
	t.Helper()
	var files []tt.File
	titles := map[string]int{}
	add := func(folder, name string, data []byte, extra map[string]any) {
		files = append(files, tt.File{Name: tt.GP + folder + "/" + name, Data: data},
			tt.File{Name: tt.GP + folder + "/" + name + ".json", Data: tt.PhotoJSON(name, 1600000000+int64(len(files)), extra)})
	}
	albums := []string{"Beach", "Family", "Garden"}
	for _, a := range albums {
		files = append(files, tt.File{Name: tt.GP + a + "/metadata.json", Data: tt.AlbumJSON(a)})
	}
	for i := 0; i < n-3; i++ {
		name := fmt.Sprintf("IMG_%04d.jpg", i)
		data := tt.JPEG(byte(i))
		data = append(data, byte(i>>8), byte(i)) // distinct beyond 256
		var extra map[string]any
		if i%7 == 0 {
			extra = map[string]any{"favorited": true}
		}
		add("Photos from 2020", name, data, extra)
		titles[name]++
		if i%3 == 0 {
			add(albums[i%len(albums)], name, data, extra)
		}
	}
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("VID_%d.mp4", i)
		add("Photos from 2021", name, tt.Movie(time.Unix(1610000000, 0), 21<<20, false, byte(100+i)), nil)
		titles[name]++
	}
	files = append(files, tt.File{Name: tt.GP + "Beach/LIVE.HEIC", Data: []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")},
		tt.File{Name: tt.GP + "Beach/LIVE.HEIC.json", Data: tt.PhotoJSON("LIVE.HEIC", 1620000000, nil)},
		tt.File{Name: tt.GP + "Beach/LIVE.MOV", Data: tt.Movie(time.Unix(1620000001, 0), 4000, false, 9)})
	titles["LIVE.HEIC"]++
	return tt.WriteParts(t, t.TempDir(), tt.Split(files, 3), "zip", "tgz", "zip"), titles
}

// uploadPath reports a request of the upload path, where a kill is made.
func uploadPath(route string) bool {
	for _, p := range []string{"POST /files", "POST /collections", "GET /files/multipart-upload-urls", "PUT /store/", "POST /store/"} {
		if strings.HasPrefix(route, p) {
			return true
		}
	}
	return false
}

// killAt stalls the k-th request of the upload path (an upload-URL, a
// part, a completion, a commit, an album's creation, an addition), or
// lets it be applied with its answer lost and stalls whatever comes next
// (the confirmation of a commit, say): the kill comes with the state at
// either side of the request.
func killAt(s *enteapitest.Server, rng *rand.Rand) string {
	k := int64(1 + rng.IntN(40))
	applied := rng.IntN(2) == 0
	var seen atomic.Int64
	var armed atomic.Bool
	s.SetChaos(func(route string) (enteapitest.Fault, bool) {
		if armed.Load() {
			return enteapitest.StallHeaders(), true
		}
		if !uploadPath(route) || seen.Add(1) != k {
			return enteapitest.Fault{}, false
		}
		if applied {
			armed.Store(true)
			return enteapitest.LoseResponse(), true
		}
		return enteapitest.StallHeaders(), true
	})
	return fmt.Sprintf("request %d of the upload path (applied first: %v)", k, applied)
}

// TestImportKilledTenTimesEndsWithEachPhotoOnce kills a real quak import
// ten times in a row (SIGKILL at seeded requests: a commit, an album's
// creation, an addition, a part, a completion, each applied with its
// answer never received, or not applied), then lets a run finish: the
// account holds every original of the Takeout exactly once, in its albums.
func TestImportKilledTenTimesEndsWithEachPhotoOnce(t *testing.T) {
	bin := buildQuak(t)
	e, s, u, _ := loggedIn(t)
	paths, titles := killTakeout(t, 200)
	rng := rand.New(rand.NewPCG(39, 10))
	killed := 0
	for i := 0; i < 10; i++ {
		for len(s.Stalled) > 0 {
			<-s.Stalled
		}
		where := killAt(s, rng)
		if !killWhenStalled(t, bin, e, s, append([]string{"import", "takeout"}, paths...)...) {
			t.Fatalf("run %d ended before %s", i, where)
		}
		killed++
		s.SetChaos(nil)
		s.Settle()
	}
	code, out, errOut := e.run(append([]string{"import", "takeout"}, paths...)...)
	require.Equal(t, exitOK, code, out+errOut)
	require.Equal(t, 10, killed)
	got := accountTitles(t, s, u)
	assert.Equal(t, titles, got, "each original exactly once")
	code, out, _ = e.run(append([]string{"import", "takeout"}, paths...)...)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "0 of 200 files uploaded")
}

// killWhenStalled runs quak and SIGKILLs it once the server stalls one of
// its requests; false when it ended first.
func killWhenStalled(t *testing.T, bin string, e *env, s *enteapitest.Server, args ...string) bool {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "QUAK_CONFIG_DIR="+e.vars["QUAK_CONFIG_DIR"])
	var stderr, stdout strings.Builder
	cmd.Stderr, cmd.Stdout = &stderr, &stdout
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // how it ended is what the caller asks
		close(done)
	}()
	select {
	case <-s.Stalled:
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return true
	case <-done:
		t.Logf("quak ended %d: %s%s", cmd.ProcessState.ExitCode(), stdout.String(), stderr.String())
		return false
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		<-done
		t.Fatalf("quak neither stalled nor ended: %s", stderr.String())
		return false
	}
}

// accountTitles counts the account's files by title.
func accountTitles(t *testing.T, s *enteapitest.Server, u *enteapitest.User) map[string]int {
	t.Helper()
	c := s.Client(nil).WithToken(u.Token())
	keys := catalog.Keys{UserID: u.ID, MasterKey: u.MasterKey, PublicKey: u.PublicKey, SecretKey: u.SecretKey}
	cols, err := c.Collections(t.Context(), 0)
	require.NoError(t, err)
	seen := map[int64]string{}
	for i := range cols {
		a, err := catalog.OpenAlbum(&cols[i], keys)
		require.NoError(t, err)
		for since := int64(0); ; {
			page, err := c.Diff(t.Context(), a.ID, since)
			require.NoError(t, err)
			for j := range page.Diff {
				if page.Diff[j].IsDeleted {
					continue
				}
				it, err := catalog.OpenItem(&page.Diff[j], a)
				require.NoError(t, err)
				seen[it.FileID] = it.Meta.Title
			}
			next := apiclient.DiffCursor(since, page.Diff)
			if !page.HasMore || next == since {
				break
			}
			since = next
		}
	}
	out := map[string]int{}
	for _, title := range seen {
		out[title]++
	}
	return out
}
