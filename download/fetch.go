package download

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/download/rate"
	"github.com/quak-photos/quak/retry"
)

// Target is one encrypted original to fetch.
type Target struct {
	FileID int64
	Key    []byte // the file key
	Header []byte // file.decryptionHeader
	// Size is the ciphertext size from info.fileSize, or -1 when the server
	// did not say (then the response's Content-Length is used, if any).
	Size int64
	// Hash is the metadata's hash (base64 BLAKE2b-512 of the plaintext), or
	// "" to skip the check (live photos are checked per part after unzipping).
	Hash string
	// Resume, if set, is where an earlier run left this download.
	Resume *ResumePoint
}

// Objects are where files' encrypted bytes come from: an account's API
// client, or a public link's; *apiclient.Client is one.
type Objects interface {
	DownloadFile(ctx context.Context, fileID int64) (*apiclient.Object, error)
	DownloadFileFrom(ctx context.Context, fileID, offset int64) (*apiclient.Object, error)
	DownloadFileRange(ctx context.Context, fileID, from, to int64) (*apiclient.Object, error)
	DownloadObjectRange(ctx context.Context, rawURL string, from, to int64) (*apiclient.Object, error)
}

// Fetcher downloads files through an API client with a retry policy. Set
// its fields before its first Fetch; it is then safe for concurrent use.
type Fetcher struct {
	Client Objects
	Policy retry.Policy
	// OnBytes, if set, hears of plaintext bytes as they are written (an
	// attempt that fails and is retried is counted again).
	OnBytes func(n int64)
	// TempFile creates the temp file in dir (default os.CreateTemp with
	// durable.TempPrefix); tests make it fail as a full disk would.
	TempFile func(dir string) (*os.File, error)
	// Save, if set, keeps a resume point for a later run: as a download
	// of more than SaveAbove bytes goes (SaveSpacing apart, each after an
	// fsync of its temp file), and when a download ends on an error a
	// retry could fix. Save(id, nil) forgets.
	Save      func(fileID int64, rp *ResumePoint)
	SaveAbove int64
	// Pace, if set, gives each attempt its slot: how many downloads are in
	// flight. An adaptive one gets the retry policy's overload attempts
	// (OverloadAttempts), so that 429 and 503 slow files down rather than
	// fail them.
	Pace *pace.Limiter
	// Streams > 1 fetches a file of more than StreamAbove ciphertext bytes
	// (0: DefaultStreamAbove) as that many ranges in flight, cut on the
	// encrypted chunks' edges and decrypted in order; 0 or 1, one stream.
	Streams     int
	StreamAbove int64
	// Ranges, if set, is how many ranges such a file comes as instead of
	// Streams: a number found from the link (see pace.Ranges), at most its
	// Max.
	Ranges *pace.Ranges
	// MultiFiles is how many files may come as several ranges at once (0:
	// MultiStreamFiles); each keeps Streams+1 chunks on disk beside its
	// temp file (see ring.go).
	MultiFiles int
	// Rate, if set, caps the bytes a second of every download together.
	Rate *rate.Limiter

	once sync.Once
	src  *source
}

// OverloadAttempts is how many 429 or 503 answers a file absorbs beyond
// its attempts when the number of downloads adapts.
const OverloadAttempts = 8

// Partial is a downloaded, authenticated file in a temp file, not yet
// under its final name.
type Partial struct {
	f    *os.File
	Size int64  // plaintext bytes
	Hash []byte // BLAKE2b-512 of the plaintext
	// HashMismatch: the stream authenticated, so this is what the uploader
	// encrypted, but not what its metadata claims. Keep it, and report it.
	// A download that was taken up from kept bytes is never reported so: it
	// starts over from byte 0 first.
	HashMismatch bool
	resumed      bool // part of it came from bytes kept by an earlier attempt or run
}

// Path is the temp file's path.
func (p *Partial) Path() string { return p.f.Name() }

// Fetch downloads t into a temp file in dir, a folder that holds nothing
// but quak's temp files. The retried unit is the whole
// sequence: request, streamed decrypt, hashing and writing, and the checks
// that the stream ended with an authenticated FINAL chunk at the expected
// size. A hash mismatch is not an error and is not retried (see Partial),
// but one after a download was taken up from kept bytes starts the file
// over from byte 0, once: kept bytes that are not this object's (damaged
// on disk, another download's) never make a file quak keeps.
// On error no temp file remains, but one kept for a later run through Save
// (a transient failure of a resumable download). Errors name the file id.
func (f *Fetcher) Fetch(ctx context.Context, t Target, dir string) (*Partial, error) {
	sv := f.saving(t)
	rs := takeUp(t, dir, f.source().slots())
	p, err := f.fetch(ctx, t, dir, rs, sv)
	if err == nil && p.HashMismatch && p.resumed {
		p.Discard()
		p, err = f.fetch(ctx, t, dir, &resume{whole: true}, sv)
	}
	if err != nil {
		return nil, fmt.Errorf("file %d: %w", t.FileID, err)
	}
	return p, nil
}

// fetch runs the retried attempts on rs, and leaves what they kept for a
// later run, or nothing (see resume.end).
func (f *Fetcher) fetch(ctx context.Context, t Target, dir string, rs *resume, sv saving) (*Partial, error) {
	var p *Partial
	err := f.withRetry(ctx, func(ctx context.Context) error {
		var err error
		p, err = f.attempt(ctx, t, dir, rs, sv)
		return err
	})
	rs.end(sv, t.Header, err, ctx.Err() != nil)
	if err == nil && t.Hash != "" {
		p.HashMismatch = !hashEqual(t.Hash, p.Hash)
	}
	return p, err
}

func (f *Fetcher) withRetry(ctx context.Context, op func(context.Context) error) error {
	p := f.Policy
	if f.Pace != nil && f.Pace.Adaptive() {
		p.OverloadAttempts = max(p.OverloadAttempts, OverloadAttempts)
	}
	return retry.Do(ctx, p, op)
}

// acquire waits for the attempt's slot (nil without Pace).
func (f *Fetcher) acquire(ctx context.Context) (*pace.Slot, error) {
	if f.Pace == nil {
		return nil, nil
	}
	return f.Pace.Acquire(ctx)
}

// outcome is what an attempt's end tells the limiter.
func outcome(ctx context.Context, err error) pace.Outcome {
	switch {
	case ctx.Err() != nil:
		return pace.Dropped
	case retry.Overloaded(err):
		return pace.Overloaded
	}
	return pace.OK
}

// attempt is one try of the whole sequence. After a cut that left whole
// authenticated chunks behind, the next attempt asks for the rest only
// (Range) and continues from them when the answer provably continues the
// same object; anything else starts over from byte 0. A failed attempt
// keeps its temp file for the next one only when it can be resumed.
func (f *Fetcher) attempt(ctx context.Context, t Target, dir string, rs *resume, sv saving) (p *Partial, err error) {
	sl, err := f.acquire(ctx)
	if err != nil {
		return nil, err
	}
	var moved int64
	defer func() { sl.Release(outcome(ctx, err), moved) }()
	if rs.tmp == nil {
		// Before the request: ranges write what they fetch ahead beside it.
		if rs.tmp, err = f.tempFile(dir); err != nil {
			return nil, err
		}
	}
	obj, err := rs.answer(ctx, f.source(), t)
	if err != nil {
		return nil, err
	}
	defer obj.Body.Close()
	sl.Answered()
	size := t.Size
	if size < 0 {
		size = obj.Length
	}
	if !rs.active() {
		rs.etag, rs.total = obj.ETag, size
	}
	h := keys.NewHash()
	r, err := rs.reader(t, obj.Body, size, h)
	if err != nil {
		rs.drop()
		return nil, err
	}
	defer r.Release()
	rs.saveStart(sv, t.Header, obj)
	base, resumed := rs.plain, rs.active()
	rs.saveAlong(sv, t.Header, r, h, size)
	n, err := copyOut(rs.tmp, base, size, r, h, f.OnBytes)
	moved = n
	if err != nil {
		return nil, rs.failed(err, obj.Body, r, h, base+n, ctx.Err() != nil)
	}
	p = &Partial{f: rs.tmp, Size: base + n, Hash: h.Sum(nil), resumed: resumed}
	rs.handOver() // the temp file now belongs to p
	return p, nil
}

// saving is how t's download keeps its resume points.
func (f *Fetcher) saving(t Target) saving {
	if f.Save == nil {
		return saving{}
	}
	return saving{save: func(p *ResumePoint) { f.Save(t.FileID, p) }, above: f.SaveAbove, had: t.Resume != nil}
}

// source is where f's downloads come from, made from its fields on first
// use.
func (f *Fetcher) source() *source {
	f.once.Do(func() {
		ranges := f.Ranges
		if ranges == nil {
			ranges = pace.FixedRanges(f.Streams)
		}
		f.src = &source{client: f.Client, rate: f.Rate, policy: f.Policy, ranges: ranges,
			above: positiveOr(f.StreamAbove, DefaultStreamAbove), places: newPlaces(positiveOr(f.MultiFiles, MultiStreamFiles))}
	})
	return f.src
}

// positiveOr is v if it is positive, else d.
func positiveOr[T int | int64](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

func (f *Fetcher) tempFile(dir string) (*os.File, error) {
	if f.TempFile != nil {
		return f.TempFile(dir)
	}
	return os.CreateTemp(dir, durable.TempPrefix+"*")
}

// Commit gives the file its final name and mode (see durable.Temp.Commit).
func (p *Partial) Commit(final string, mode os.FileMode, mtime time.Time) error {
	return durable.Wrap(p.f).Commit(final, mode, mtime)
}

// Discard removes the temp file.
func (p *Partial) Discard() { durable.Wrap(p.f).Discard() }
