package download_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/errs"
)

// killedRun runs fe on tg until it fails for this run, and returns the
// first resume point it recorded: what a kill just after that point
// leaves on disk, with the temp file and its side files as the run left
// them.
func (fx *fixture) killedRun(fe *download.Fetcher, tg download.Target) *download.ResumePoint {
	fx.t.Helper()
	var first *download.ResumePoint
	fe.SaveAbove = 1
	starts := 0
	fe.Save = func(_ int64, rp *download.ResumePoint) {
		switch {
		case rp != nil && rp.Chunks == 0:
			starts++ // the point before any chunk, of a download as ranges
		case rp != nil && first == nil:
			first = rp
		}
	}
	_, err := fe.Fetch(context.Background(), tg, fx.dir)
	require.Error(fx.t, err)
	// Under load, a request this run sent may reach the server only after
	// Fetch returned: Settle keeps it out of the next run's faults and
	// ranges.
	fx.s.Settle()
	require.NotNil(fx.t, first)
	require.Equal(fx.t, 1, first.Chunks, "the first point follows the first chunk")
	if fe.Streams > 1 {
		require.Equal(fx.t, 1, starts, "a download as ranges records a point before its first chunk")
	}
	return first
}

// nextRun takes tg up at rp, and returns the ranges it asked the store for.
func (fx *fixture) nextRun(fe *download.Fetcher, f *enteapitest.File, tg download.Target, rp *download.ResumePoint, faults ...enteapitest.Fault) []string {
	fx.t.Helper()
	route := fx.storeRoute(f)
	before := len(fx.s.Ranges(route))
	fx.s.ClearFaults(route)
	fx.s.Inject(route, faults...)
	fe.Save = func(int64, *download.ResumePoint) {}
	tg.Resume = rp
	p, err := fe.Fetch(context.Background(), tg, fx.dir)
	require.NoError(fx.t, err)
	assert.False(fx.t, p.HashMismatch)
	assert.True(fx.t, bytes.Equal(f.Plaintext(), readPartial(fx.t, p)), "content differs")
	return fx.s.Ranges(route)[before:]
}

// Issue 31: a kill between two resume points loses none of the chunks
// decrypted after the last one: the next run encrypts them again, checks
// them against the MACs it logged, and asks only for the rest. Plaintext
// that does not encrypt to its logged MAC, or a log that is gone, ends
// that at the chunk before.
func TestAKillLosesNoChunkDecryptedPastTheLastPoint(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, temp string)
		from   int64
	}{
		{"as left", func(*testing.T, string) {}, 4},
		{"a byte of chunk 3 changed on disk", func(t *testing.T, temp string) {
			t.Helper()
			flipByte(t, temp, 3*secretstream.ChunkSize+5)
		}, 3},
		{"the MAC after chunk 2 changed", func(t *testing.T, temp string) {
			t.Helper()
			flipByte(t, download.SideFiles(temp)[1], 3*8)
		}, 2},
		{"no MAC log", func(t *testing.T, temp string) {
			t.Helper()
			require.NoError(t, os.Remove(download.SideFiles(temp)[1]))
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := setup(t)
			f := fx.album.AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 11})
			// One stream, cut inside chunk 4, then the link is dead.
			fx.s.Inject(fx.storeRoute(f), append([]enteapitest.Fault{enteapitest.CutAfter(4*wire + 10)},
				enteapitest.Repeat(enteapitest.Status(502), 20)...)...)
			tg := fx.target(f)
			rp := fx.killedRun(fx.fetcher(), tg)
			c.damage(t, rp.Temp)
			assert.Equal(t, []string{rangeFrom(c.from * wire)}, fx.nextRun(fx.fetcher(), f, tg, rp))
			fx.noTemps()
		})
	}
}

// fe2 is a fetcher of two ranges at once.
func fe2(fx *fixture) *download.Fetcher {
	fe := fx.multiFetcher()
	fe.Streams = 2
	return fe
}

func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer func() { require.NoError(t, fh.Close()) }()
	b := []byte{0}
	_, err = fh.ReadAt(b, at)
	require.NoError(t, err)
	b[0] ^= 0x40
	_, err = fh.WriteAt(b, at)
	require.NoError(t, err)
}

// Issue 31: chunks that ranges fetched ahead of a stalled one are kept on
// disk, and the next run reads them from there instead of fetching them
// again; one cut short is asked for its missing bytes only; one whose
// bytes changed on disk is fetched again.
func TestChunksFetchedAheadOfAStalledRangeAreNotFetchedAgain(t *testing.T) {
	for _, c := range []string{"as left", "changed on disk", "chunk 3 cut short", "chunk 1 cut short", "its rest refused", "its rest shifted",
		"every place taken", "every place and every extra taken", "a link", "a folder",
		"changed, its record too", "a hard link to a saved photo", "ranges found from the link, at one"} {
		t.Run(c, func(t *testing.T) {
			fx := setup(t)
			f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 24 << 20, Seed: 12})
			tg := fx.target(f)
			segs := segments(0, tg.Size)
			// Chunks 0 and 2 arrive (and 1,000 bytes of chunk 3, if cut); the
			// range of chunk 1 never does, nor any after, for this run.
			faults := []enteapitest.Fault{enteapitest.Pass(), enteapitest.Pass()}
			if c == "chunk 3 cut short" || c == "chunk 1 cut short" || c == "its rest refused" || c == "its rest shifted" {
				faults = append(faults, enteapitest.CutAfter(1000))
			}
			fx.s.Inject(fx.storeRoute(f), append(faults, enteapitest.Repeat(enteapitest.Status(502), 60)...)...)
			enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
				g.Serve(fx.storeKey(f, segs[0]))
				g.Serve(fx.storeKey(f, segs[2]))
				if c == "chunk 3 cut short" {
					g.Serve(fx.storeKey(f, segs[3]))
				}
				// Chunk 2's worker asks for chunk 3 only once chunk 2 is on
				// disk, whole, and its slot's record says so; a cut chunk's
				// asks for its rest only once its first bytes are.
				g.Await(2)
				if c == "chunk 1 cut short" || c == "its rest refused" || c == "its rest shifted" {
					g.Serve(fx.storeKey(f, segs[1]))
					g.Await(2)
				}
			})
			fe := fx.multiFetcher()
			fe.Streams = 2
			rp := fx.killedRun(fe, tg)
			want := []string{segs[1], segs[3], segs[4], segs[5]}
			if c != "a folder" {
				defer fx.noTemps()
			}
			switch c {
			case "changed on disk":
				flipByte(t, download.SideFiles(rp.Temp)[0], 2*wire+9) // chunk 2 lies in slot 2 of 3
				want = append(want, segs[2])
			case "chunk 3 cut short":
				want[1] = closedRange(3*seg+1000, 4*seg-1)
			case "chunk 1 cut short":
				// The next run starts at chunk 1, from where it was cut.
				want[0] = closedRange(seg+1000, 2*seg-1)
			case "every place taken":
				// Files in flight as ranges hold every place: a download
				// whose ring was left takes one beside them.
				fe := fe2(fx)
				download.TakePlaces(fe, download.MultiStreamFiles, 0)
				assert.Equal(t, sortedCopy(want), sortedCopy(fx.nextRun(fe, f, tg, rp)))
				return
			case "every place and every extra taken":
				// No more than twice the places: one stream then.
				fe := fe2(fx)
				download.TakePlaces(fe, download.MultiStreamFiles, download.MultiStreamFiles)
				assert.Equal(t, []string{rangeFrom(seg)}, fx.nextRun(fe, f, tg, rp))
				return
			case "ranges found from the link, at one":
				// A number of ranges found from the link that is one yet
				// still reads what the ring holds: as ranges, one at a time.
				fe := fe2(fx)
				stopped := func() time.Time { return time.Unix(0, 0) } // no window ends: one it stays
				fe.Ranges = pace.FoundRanges(fe.Streams, stopped)
				assert.Equal(t, sortedCopy(want), sortedCopy(fx.nextRun(fe, f, tg, rp)))
				assert.Equal(t, 1, fe.Ranges.Now())
				return
			case "its rest shifted":
				// A store that answers the rest with other bytes: never
				// spliced; the file goes on as one stream from the chunk,
				// checked as any answer is.
				assert.Equal(t, []string{closedRange(seg+1100, 2*seg+99), rangeFrom(seg)}, // the store logs the shifted range
					fx.nextRun(fe2(fx), f, tg, rp, enteapitest.ShiftRange(100)))
				return
			case "its rest refused":
				// A store that refuses the rest (416, not logged) is asked
				// for the whole chunk.
				assert.Equal(t, sortedCopy(want), sortedCopy(fx.nextRun(fe2(fx), f, tg, rp, enteapitest.Status(416))))
				return
			case "a link":
				// A ring replaced by a link to a file elsewhere: never written
				// through; a new ring takes its place.
				defer plantRing(t, download.SideFiles(rp.Temp)[0], os.Symlink)()
				want = append(want, segs[2])
			case "changed, its record too":
				// Bytes that pass their record and CRC yet are not the chunk
				// (another download's ring, say): the chunk fails to
				// authenticate when read, and is fetched again, not reported
				// as corrupt.
				ring := download.SideFiles(rp.Temp)[0]
				b, err := os.ReadFile(ring)
				require.NoError(t, err)
				b[2*wire+100] ^= 1
				rec := b[3*wire+2*16:]
				require.Equal(t, uint64(3), binary.LittleEndian.Uint64(rec), "slot 2 holds chunk 2")
				n := binary.LittleEndian.Uint32(rec[8:])
				binary.LittleEndian.PutUint32(rec[12:], crc32.Checksum(b[2*wire:2*wire+int64(n)], crc32.MakeTable(crc32.Castagnoli)))
				require.NoError(t, os.WriteFile(ring, b, 0o600))
				// The run ends byte-exact, with chunk 2 fetched; which chunks
				// further on its failed attempt had fetched already, and the
				// next one fetched again, depends on when it stopped.
				got := fx.nextRun(fe2(fx), f, tg, rp)
				for _, s := range segs[1:] {
					assert.Contains(t, got, s)
				}
				return
			case "a hard link to a saved photo":
				// Another name of a file quak does not own: never written.
				defer plantRing(t, download.SideFiles(rp.Temp)[0], os.Link)()
				want = append(want, segs[2])
			case "a folder":
				// A ring that cannot be had at all: the download comes as one
				// stream, and ends byte-exact.
				ring := download.SideFiles(rp.Temp)[0]
				require.NoError(t, os.Remove(ring))
				require.NoError(t, os.MkdirAll(filepath.Join(ring, "x"), 0o700))
				want = []string{rangeFrom(seg)}
				defer func() { // what it cannot remove is left, to the next run's sweep
					require.NoError(t, os.RemoveAll(ring))
					fx.noTemps()
				}()
			}
			fe = fx.multiFetcher()
			fe.Streams = 2
			assert.Equal(t, sortedCopy(want), sortedCopy(fx.nextRun(fe, f, tg, rp)))
		})
	}
}

// Issue 31: with no MAC log, chunks left in the ring right after the
// point are decrypted from there, authenticated, up to the first slot
// that does not hold the next chunk.
func TestChunksInTheRingRightAfterThePointAreTakenUp(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 24 << 20, Seed: 13})
	tg := fx.target(f)
	segs := segments(0, tg.Size)
	fx.s.Inject(fx.storeRoute(f), append([]enteapitest.Fault{enteapitest.Pass(), enteapitest.Pass(), enteapitest.Pass()},
		enteapitest.Repeat(enteapitest.Status(502), 60)...)...)
	enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
		g.Serve(fx.storeKey(f, segs[0]))
		g.Serve(fx.storeKey(f, segs[1]))
		g.Serve(fx.storeKey(f, segs[2]))
	})
	fe := fx.multiFetcher()
	fe.Streams = 2
	rp := fx.killedRun(fe, tg)
	require.NoError(t, os.Remove(download.SideFiles(rp.Temp)[1]))
	fe = fx.multiFetcher()
	fe.Streams = 2
	// Chunks 1 and 2 come from slots 1 and 2; slot 0 was cleared for
	// chunk 3, which never came.
	assert.Equal(t, sortedCopy(segs[3:]), sortedCopy(fx.nextRun(fe, f, tg, rp)))
	fx.noTemps()
}

// Ctrl-C or SIGTERM stops a run; a large download it stopped keeps its
// bytes and its point for the next run, as a cut does.
func TestAStoppedRunKeepsItsLargeDownloads(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 24 << 20, Seed: 14})
	tg := fx.target(f)
	fx.s.Inject(fx.storeRoute(f), enteapitest.StallAfter(3*wire+10))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-fx.s.Stalled
		cancel() // the run is stopped while chunk 3 is on its way
	}()
	fe := fx.fetcher()
	fe.SaveAbove = 1
	var last *download.ResumePoint
	fe.Save = func(_ int64, rp *download.ResumePoint) { last = rp }
	_, err := fe.Fetch(ctx, tg, fx.dir)
	require.ErrorIs(t, err, context.Canceled)
	require.NotNil(t, last, "the point is kept")
	assert.Positive(t, last.Chunks) // how many of the three reached the reader before it stopped varies
	assert.FileExists(t, last.Temp)
	assert.Equal(t, []string{rangeFrom(last.Offset)}, fx.nextRun(fx.fetcher(), f, tg, last))
	fx.noTemps()
}

// Issue 31: a download as ranges stopped before its first chunk could be
// decrypted (eight ranges share the link, so the first chunk is no sooner
// whole than the others) keeps its ring: the next run asks for the rest of
// the first chunk and for none of the chunks the ring holds.
func TestARunStoppedBeforeTheFirstChunkKeepsItsRing(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 24 << 20, Seed: 15})
	tg := fx.target(f)
	segs := segments(0, tg.Size)
	// Chunk 0 is cut after 1,000 bytes and never comes whole this run;
	// chunks 1 and 2 come whole.
	fx.s.Inject(fx.storeRoute(f), append([]enteapitest.Fault{enteapitest.CutAfter(1000), enteapitest.Pass(), enteapitest.Pass()},
		enteapitest.Repeat(enteapitest.Status(502), 60)...)...)
	whole := make(chan int64, 8)
	t.Cleanup(download.OnWholeInRing(func(j int64) { whole <- j }))
	enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
		g.Serve(fx.storeKey(f, segs[0]))
		g.Serve(fx.storeKey(f, segs[1]))
		g.Serve(fx.storeKey(f, segs[2]))
		for range 2 { // chunks 1 and 2 are on disk before chunk 0's rest fails
			select {
			case <-whole:
			case <-time.After(enteapitest.GateBound):
				assert.Fail(t, "chunks 1 and 2 never reached the ring")
				return
			}
		}
	})
	fe := fx.multiFetcher()
	fe.Streams = 2
	fe.SaveAbove = 1
	var points []*download.ResumePoint
	fe.Save = func(_ int64, rp *download.ResumePoint) { points = append(points, rp) }
	_, err := fe.Fetch(context.Background(), tg, fx.dir)
	require.Error(t, err)
	require.NotEmpty(t, points)
	last := points[len(points)-1]
	require.NotNil(t, last, "the ring is kept for the next run")
	assert.Zero(t, last.Chunks)
	assert.Equal(t, []string{closedRange(1000, seg-1), segs[3], segs[4], segs[5]}, sortedCopy(fx.nextRun(fe2(fx), f, tg, last)))
	fx.noTemps()
}

// A chunk the server sends damaged is still damage on the server when it
// comes as a range: reported at once, not taken for bytes kept on disk.
func TestADamagedRangeIsStillCorruption(t *testing.T) {
	fx := setup(t)
	f := fx.album.AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 24 << 20, Seed: 16})
	segs := segments(0, fx.target(f).Size)
	enteapitest.NewGate(t, fx.s, fx.atStore(f), func(g *enteapitest.Gate) {
		g.Serve(fx.storeKey(f, segs[0]))
	})
	fx.s.Inject(fx.storeRoute(f), enteapitest.Pass(), enteapitest.FlipAt(100))
	fe := fx.multiFetcher()
	fe.Streams = 2
	_, err := fe.Fetch(context.Background(), fx.target(f), fx.dir)
	require.ErrorIs(t, err, errs.ErrCorrupted)
	assert.Equal(t, 1, fx.s.Requests(apiRoute(f)), "one attempt: damage is not retried")
	fx.noTemps()
}

// plantRing puts in ring's place another name, made by link, of a photo
// quak does not own, and returns a check that the photo still holds its
// bytes.
func plantRing(t *testing.T, ring string, link func(oldname, newname string) error) func() {
	t.Helper()
	saved := filepath.Join(t.TempDir(), "saved.jpg")
	require.NoError(t, os.WriteFile(saved, []byte("photo"), 0o600))
	require.NoError(t, os.Remove(ring))
	require.NoError(t, link(saved, ring))
	return func() {
		got, err := os.ReadFile(saved)
		require.NoError(t, err)
		assert.True(t, string(got) == "photo", "the photo was written through its other name (%d bytes)", len(got))
	}
}
