package download_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/errs"
)

// wire is one whole chunk on the wire.
const wire = secretstream.ChunkSize + secretstream.Overhead

func rangeFrom(n int64) string { return fmt.Sprintf("bytes=%d-", n) }

// A 40 MiB file cut after chunk 3, then after chunk 7, then served whole,
// resumes twice from exactly those chunks and ends byte-exact.
func TestResumesFromTheLastAuthenticatedChunk(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 40 << 20, Seed: 7})
	fx.s.Inject(fx.storeRoute(f),
		enteapitest.CutAfter(3*wire+1000),   // chunk 4 arrives only in part
		enteapitest.CutAfter((7-3)*wire+50), // the ranged answer, cut inside chunk 8
	)
	got, p := fx.fetchAndCommit(f)
	assert.True(t, bytes.Equal(f.Plaintext(), got), "content differs")
	assert.Equal(t, int64(40<<20), p.Size)
	assert.False(t, p.HashMismatch, "the hash carried across resumes")
	assert.Equal(t, []string{"", rangeFrom(3 * wire), rangeFrom(7 * wire)}, fx.s.Ranges(fx.storeRoute(f)))
}

// Whatever does not provably continue the same object starts over from
// byte 0, and still ends byte-exact: a store that ignores Range (200), a
// new ETag, a 416.
func TestResumeStartsOverWhenTheAnswerDoesNotContinue(t *testing.T) {
	for _, c := range []struct {
		name   string
		second enteapitest.Fault
		before func(*enteapitest.File)
		ranges []string
	}{
		{"200", enteapitest.IgnoreRange(), nil, []string{"", rangeFrom(2 * wire)}},
		{"416", enteapitest.Status(416), nil, []string{"", ""}},
		{"new ETag", enteapitest.Pass(), func(f *enteapitest.File) { f.SetETag("stored again") }, []string{"", rangeFrom(2 * wire), ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := setup(t)
			f := fx.album.AddFile(enteapitest.FileSpec{Title: "v.mp4", Size: 12<<20 + 5, Seed: 3})
			fx.s.Inject(fx.storeRoute(f), enteapitest.CutAfter(2*wire+77), c.second)
			fe := fx.fetcher()
			if c.before != nil {
				prev := fe.Policy.OnRetry
				fe.Policy.OnRetry = func(err error, n int, d time.Duration) { prev(err, n, d); c.before(f) }
			}
			p, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
			require.NoError(t, err)
			defer p.Discard()
			assert.Equal(t, int64(12<<20+5), p.Size)
			assert.False(t, p.HashMismatch, "bytes of two answers were spliced")
			// A 416 comes from the fault, before the store logs the request.
			assert.Equal(t, c.ranges, fx.s.Ranges(fx.storeRoute(f)))
		})
	}
}

// A flipped byte after a resume is caught as corruption.
func TestFlipAfterAResumeIsCaught(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "v.mp4", Size: 9 << 20, Seed: 4})
	fx.s.Inject(fx.storeRoute(f), enteapitest.CutAfter(wire+10), enteapitest.FlipAt(100))
	_, err := fx.fetcher().Fetch(context.Background(), fx.target(f), fx.dir)
	assert.ErrorIs(t, err, errs.ErrCorrupted)
	assert.Equal(t, []string{"", rangeFrom(wire)}, fx.s.Ranges(fx.storeRoute(f)))
	fx.noTemps()
}

// A cut before any whole chunk asks for the whole object again.
func TestNoRangeBeforeTheFirstChunk(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "v.mp4", Size: 5 << 20, Seed: 5})
	fx.s.Inject(fx.storeRoute(f), enteapitest.CutAfter(wire-1))
	got, _ := fx.fetchAndCommit(f)
	assert.True(t, bytes.Equal(f.Plaintext(), got))
	assert.Equal(t, []string{"", ""}, fx.s.Ranges(fx.storeRoute(f)))
}
