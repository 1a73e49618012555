package backup

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
)

const wireChunk = secretstream.ChunkSize + secretstream.Overhead

// A large download that fails for good in one run (a dead link) is taken
// up by the next from its recorded chunk, with a Range request, and ends
// byte-exact; the state never holds key material.
func TestTheNextRunResumesALargeDownload(t *testing.T) {
	e := newEnv(t)
	f := e.u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 9})
	route := fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID)
	e.s.Inject(route, append([]enteapitest.Fault{enteapitest.CutAfter(2*wireChunk + 10)}, enteapitest.Repeat(enteapitest.Status(502), 3)...)...)
	o := e.options()
	o.ResumeAbove = 8 << 20
	o.Streams = 1 // these tests script the requests of one stream; TestTheNextRunResumesSeveralRanges covers several
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Failed, "the link died for this run")
	assert.Len(t, e.keptParts(), 1, "the partial download is kept for the next run")
	assert.Equal(t, []string{"Videos/.meta/album_meta.json"}, e.walk(), "nothing but the album's files in its folder")

	db, err := os.ReadFile(folder.At(e.dir).StateFile())
	require.NoError(t, err)
	sub, err := chacha20.HChaCha20(f.Key(), f.FileHeader()[:16])
	require.NoError(t, err)
	for _, k := range [][]byte{f.Key(), sub, e.u.MasterKey, e.u.SecretKey} {
		for _, form := range [][]byte{k, []byte(base64.StdEncoding.EncodeToString(k)), []byte(base64.URLEncoding.EncodeToString(k)), []byte(hex.EncodeToString(k))} {
			assert.False(t, bytes.Contains(db, form), "the state holds key material")
		}
	}

	sum, err = Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	e.same("Videos/long.mp4", f.Plaintext())
	assert.Equal(t, []string{"", fmt.Sprintf("bytes=%d-", 2*wireChunk)}, e.s.Ranges(route), "taken up at chunk 2")
	e.noTemps()
	assert.Zero(t, e.resumesLeft(t), "the resume point is forgotten once saved")
}

func (e *env) resumesLeft(t *testing.T) int {
	t.Helper()
	st, drop, err := folder.At(e.dir).CopyState() // a private copy: reads without the lock
	require.NoError(t, err)
	defer drop()
	m, err := st.Resumes()
	require.NoError(t, err)
	return len(m)
}

// Issue 20: a download of several ranges at once that dies for this run is
// taken up by the next from its recorded chunk, again as ranges, and ends
// byte-exact.
func TestTheNextRunResumesSeveralRanges(t *testing.T) {
	e := newEnv(t)
	f := e.u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 9})
	route := fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID)
	// The first range (its first chunk) arrives;
	// then the link is dead.
	e.s.Inject(route, append([]enteapitest.Fault{enteapitest.Pass()}, enteapitest.Repeat(enteapitest.Status(502), 40)...)...)
	o := e.options()
	o.ResumeAbove = 8 << 20
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Failed, "the link died for this run")
	seg := func(a, b int64) string { return fmt.Sprintf("bytes=%d-%d", a*wireChunk, b*wireChunk-1) }
	const k int64 = 1
	require.Equal(t, []string{seg(0, k)}, e.s.Ranges(route))
	e.s.ClearFaults(route)

	sum, err = Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	e.same("Videos/long.mp4", f.Plaintext())
	want := []string{seg(0, k)}
	for a := k; a < 6; a += k { // 24 MiB: 6 chunks
		want = append(want, seg(a, min(a+k, 6)))
	}
	assert.Equal(t, sortedStrings(want), sortedStrings(e.s.Ranges(route)), "taken up after the first range")
	e.noTemps()
	assert.Zero(t, e.resumesLeft(t))
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// --resume-above's value is the run's: zero takes the default, a spacing
// given stays, and a negative one (never) stays negative.
func TestResumeAboveIsTheOneGiven(t *testing.T) {
	for given, want := range map[int64]int64{0: DefaultResumeAbove, 8 << 20: 8 << 20, -1: -1} {
		o := Options{Transfer: Transfer{ResumeAbove: given}}
		o.defaults()
		assert.Equal(t, want, o.ResumeAbove, "given %d", given)
	}
}
