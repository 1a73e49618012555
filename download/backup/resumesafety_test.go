package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// cutLarge backs up a 24 MiB file whose download dies after two chunks in
// this run, leaving a resume point; it returns the file, its store route
// and the options the runs use.
func cutLarge(e *env) (*enteapitest.File, string, Options) {
	e.t.Helper()
	f := e.u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 9})
	route := fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID)
	e.s.Inject(route, append([]enteapitest.Fault{enteapitest.CutAfter(2*wireChunk + 10)}, enteapitest.Repeat(enteapitest.Status(502), 3)...)...)
	o := e.options()
	o.ResumeAbove = 8 << 20
	o.Streams = 1 // these tests script the requests of one stream; TestTheNextRunResumesSeveralRanges covers several
	sum, err := Run(context.Background(), o)
	require.NoError(e.t, err)
	require.Equal(e.t, 1, sum.Failed)
	return f, route, o
}

// editResume rewrites the recorded resume points (no run holds the state).
func (e *env) editResume(edit func(id int64, rp *download.ResumePoint)) {
	e.t.Helper()
	st, err := folder.At(e.dir).OpenState()
	require.NoError(e.t, err)
	defer func() { require.NoError(e.t, st.Close()) }()
	points, err := st.Resumes()
	require.NoError(e.t, err)
	require.NotEmpty(e.t, points)
	for id, b := range points {
		rp := &download.ResumePoint{}
		require.NoError(e.t, json.Unmarshal(b, rp))
		edit(id, rp)
		require.NoError(e.t, st.PutResume(id, rp))
	}
}

// A kept temp file replaced by a symlink is never written through: the
// file it points to keeps its bytes, and the download starts over.
func TestAResumeNeverWritesThroughASymlink(t *testing.T) {
	e := newEnv(t)
	f, route, o := cutLarge(e)
	victim := filepath.Join(t.TempDir(), "victim")
	want := bytes.Repeat([]byte("mine "), 5<<20) // larger than the resume point's plaintext
	require.NoError(t, os.WriteFile(victim, want, 0o644))
	e.editResume(func(_ int64, rp *download.ResumePoint) {
		require.NoError(t, os.Remove(rp.Temp))
		require.NoError(t, os.Symlink(victim, rp.Temp))
	})
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	e.same("Videos/long.mp4", f.Plaintext())
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "quak wrote through a symlink")
	assert.Equal(t, "", e.s.Ranges(route)[1], "started over from byte 0")
	e.noTemps()
}

// A resume point naming a file outside quak's temp area (an album's own
// file, say) is never opened, truncated or removed.
func TestAResumeNeverTouchesAFileOutsideTheTempArea(t *testing.T) {
	e := newEnv(t)
	f, route, o := cutLarge(e)
	mine := filepath.Join(e.dir, "Videos", durable.TempPrefix+"mine")
	want := bytes.Repeat([]byte("mine "), 5<<20)
	require.NoError(t, os.WriteFile(mine, want, 0o644))
	e.editResume(func(_ int64, rp *download.ResumePoint) {
		b, err := os.ReadFile(rp.Temp)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(mine, b[:rp.Plain], 0o644)) // the right bytes, in the wrong place
		want = b[:rp.Plain]
		rp.Temp = mine
	})
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	e.same("Videos/long.mp4", f.Plaintext())
	got, err := os.ReadFile(mine)
	require.NoError(t, err, "a file outside the temp area was removed")
	assert.True(t, bytes.Equal(want, got), "a file outside the temp area was written")
	assert.Equal(t, "", e.s.Ranges(route)[1], "started over from byte 0")
}

// A resume point no longer needed is forgotten at the end of a complete
// run; its temp file goes only when it is in quak's temp area.
func TestAStaleResumeRemovesOnlyItsOwnTempFile(t *testing.T) {
	e := newEnv(t)
	_, _, o := cutLarge(e)
	mine := filepath.Join(e.dir, "Videos", durable.TempPrefix+"mine")
	require.NoError(t, os.WriteFile(mine, []byte("mine"), 0o644))
	var kept string
	e.editResume(func(_ int64, rp *download.ResumePoint) { kept, rp.Temp = rp.Temp, mine })
	require.NoError(t, os.Remove(kept))
	o.Filter.Albums.Exclude = []string{"Videos"} // not needed by this run: the point is stale
	_, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Zero(t, e.resumesLeft(t))
	assert.True(t, e.exists("Videos/"+durable.TempPrefix+"mine"), "a stale point removed a file outside the temp area")
}

// A file the filters leave out is not needed by the run either: its
// partial download and its side files go at the end of a complete run.
func TestAPartialOfAFileLeftOutGoes(t *testing.T) {
	e := newEnv(t)
	_, _, o := cutLarge(e)
	require.NotEmpty(t, e.keptParts())
	o.Filter.Until = time.Date(1971, 1, 1, 0, 0, 0, 0, time.UTC) // every file is newer
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Zero(t, sum.New, "left out")
	assert.False(t, e.exists("Videos/long.mp4"))
	assert.Zero(t, e.resumesLeft(t))
	e.noTemps()
}

// (the state of one file, read without the lock)
func (e *env) fileState(id int64) *state.File {
	e.t.Helper()
	st, drop, err := folder.At(e.dir).CopyState()
	require.NoError(e.t, err)
	defer drop()
	f, err := st.File(id)
	require.NoError(e.t, err)
	return f
}

// A flipped bit in a kept temp file's plaintext is noticed before any
// more is downloaded: the file starts over from byte 0 and is saved
// byte-exact, recorded as good because it is.
func TestAFlippedBitInAKeptTempFileStartsOver(t *testing.T) {
	e := newEnv(t)
	f, route, o := cutLarge(e)
	e.editResume(func(_ int64, rp *download.ResumePoint) {
		b, err := os.ReadFile(rp.Temp)
		require.NoError(t, err)
		b[12345] ^= 4
		require.NoError(t, os.WriteFile(rp.Temp, b, 0o600))
	})
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	assert.Zero(t, sum.HashMismatches)
	e.same("Videos/long.mp4", f.Plaintext())
	assert.Equal(t, state.Saved, e.fileState(f.ID).Status)
	assert.Equal(t, []string{"", ""}, e.s.Ranges(route), "started over at once, without a Range")
	e.noTemps()
}

// Two resume points whose temp files were swapped: each file's kept bytes
// are not its own, and both end byte-exact.
func TestSwappedResumePointsEndByteExact(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("Videos")
	f1 := a.AddFile(enteapitest.FileSpec{Title: "one.mp4", Size: 20 << 20, Seed: 1})
	f2 := a.AddFile(enteapitest.FileSpec{Title: "two.mp4", Size: 20 << 20, Seed: 2})
	for _, f := range []*enteapitest.File{f1, f2} {
		e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), append([]enteapitest.Fault{enteapitest.CutAfter(2*wireChunk + 10)}, enteapitest.Repeat(enteapitest.Status(502), 3)...)...)
	}
	o := e.options()
	o.ResumeAbove = 8 << 20
	o.Streams = 1 // these tests script the requests of one stream; TestTheNextRunResumesSeveralRanges covers several
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	require.Equal(t, 2, sum.Failed)
	temps := map[int64]string{}
	e.editResume(func(id int64, rp *download.ResumePoint) { temps[id] = rp.Temp })
	e.editResume(func(id int64, rp *download.ResumePoint) {
		for other, p := range temps {
			if other != id {
				rp.Temp = p
			}
		}
	})
	sum, err = Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 2, sum.New)
	assert.Zero(t, sum.HashMismatches)
	e.same("Videos/one.mp4", f1.Plaintext())
	e.same("Videos/two.mp4", f2.Plaintext())
	e.noTemps()
}

// A resume point of an older quak carries no hash of its kept bytes: a
// damaged prefix is then caught by Ente's hash at the end, and the file
// starts over from byte 0, once, and is saved byte-exact.
func TestAHashMismatchAfterAResumeStartsOverOnce(t *testing.T) {
	e := newEnv(t)
	f, route, o := cutLarge(e)
	e.editResume(func(_ int64, rp *download.ResumePoint) {
		rp.PrefixHash = ""
		b, err := os.ReadFile(rp.Temp)
		require.NoError(t, err)
		b[12345] ^= 4
		require.NoError(t, os.WriteFile(rp.Temp, b, 0o600))
	})
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	assert.Zero(t, sum.HashMismatches)
	e.same("Videos/long.mp4", f.Plaintext())
	assert.Equal(t, state.Saved, e.fileState(f.ID).Status)
	assert.Equal(t, []string{"", fmt.Sprintf("bytes=%d-", 2*wireChunk), ""}, e.s.Ranges(route))
	e.noTemps()
}

// A temp file shorter than its resume point would leave a hole of zeros
// in the middle of the file: it starts over from byte 0 instead.
func TestATempShorterThanItsResumePointStartsOver(t *testing.T) {
	e := newEnv(t)
	f, route, o := cutLarge(e)
	e.editResume(func(_ int64, rp *download.ResumePoint) {
		require.NoError(t, os.Truncate(rp.Temp, rp.Plain-1))
	})
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.New)
	e.same("Videos/long.mp4", f.Plaintext())
	assert.Equal(t, []string{"", ""}, e.s.Ranges(route))
	e.noTemps()
}

// When the uploader's own bytes do not match their hash, the second,
// whole download says so too: the file is kept and recorded as a
// mismatch, never as good.
func TestAGenuineMismatchAfterAResumeIsRecordedAsOne(t *testing.T) {
	e := newEnv(t)
	f := e.u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 9,
		Hash: "Ym9ndXMgaGFzaA=="})
	route := fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID)
	e.s.Inject(route, enteapitest.CutAfter(2*wireChunk+10))
	o := e.options()
	o.Streams = 1 // the requests of one stream are scripted
	sum, err := Run(context.Background(), o)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.HashMismatches)
	e.same("Videos/long.mp4", f.Plaintext())
	assert.Equal(t, state.HashMismatch, e.fileState(f.ID).Status)
	assert.Equal(t, []string{"", fmt.Sprintf("bytes=%d-", 2*wireChunk), ""}, e.s.Ranges(route), "resumed, then once from byte 0")
	e.noTemps()
}
