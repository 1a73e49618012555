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
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
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
		{"206 from a later offset", enteapitest.ShiftRange(wire), nil, []string{"", rangeFrom(3 * wire), ""}},
		{"206 from an earlier offset", enteapitest.ShiftRange(-100), nil, []string{"", rangeFrom(2*wire - 100), ""}},
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

// A run killed at the middle of a large download refetches at most 60% of
// it: of the resume points saved as it went, the last one before the
// middle is at most a sixteenth of the file behind.
func TestAKillAtTheMiddleRefetchesAtMost60Percent(t *testing.T) {
	fx := setup(t)
	const size = 72 << 20 // 18 chunks: a sixteenth is more than one
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: size, Seed: 5})
	fe := fx.fetcher()
	var points []int64
	fe.Save = func(_ int64, rp *download.ResumePoint) {
		if rp != nil {
			points = append(points, rp.Offset)
		}
	}
	fe.SaveAbove = 16 << 20
	p, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
	require.NoError(t, err)
	p.Discard()
	total := secretstream.CiphertextSize(size)
	last := int64(0) // what a kill one byte before the middle leaves
	for _, off := range points {
		if off < total/2 {
			last = max(last, off)
		}
	}
	assert.LessOrEqual(t, float64(total-last)/float64(total), 0.60, "points at %v of %d", points, total)
	require.NotEmpty(t, points)
	assert.Equal(t, int64(wire), points[0], "the first point follows the first chunk")
	for i := 2; i < len(points); i++ { // then they keep their spacing, counted from byte 0
		assert.GreaterOrEqual(t, points[i]-points[i-1], download.SaveSpacing(total), "points at %v", points)
	}
}

// Only downloads larger than SaveAbove keep points as they go, whether
// they come as one stream or as ranges (whose first point is before their
// first chunk); none when SaveAbove is not set.
func TestResumePointsOnlyAboveTheThreshold(t *testing.T) {
	fx := setup(t)
	const size = 20 << 20
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "v.mp4", Size: size, Seed: 6})
	for _, ranges := range []bool{false, true} {
		for _, c := range []struct {
			above int64
			want  bool
		}{{0, false}, {secretstream.CiphertextSize(size), false}, {secretstream.CiphertextSize(size) - 1, true}} {
			fe := fx.fetcher()
			if ranges {
				fe = fx.multiFetcher()
			}
			points := 0
			fe.Save = func(_ int64, rp *download.ResumePoint) {
				if rp != nil {
					points++
				}
			}
			fe.SaveAbove = c.above
			p, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
			require.NoError(t, err)
			p.Discard()
			assert.Equal(t, c.want, points > 0, "ranges %v, SaveAbove %d: %d points", ranges, c.above, points)
		}
	}
}
