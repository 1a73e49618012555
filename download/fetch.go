// Package download saves one Ente file: it fetches the encrypted object,
// decrypts and verifies it while it streams into a temp file in the
// caller's temp folder (on the destination's file system), and gives it
// its final name only once it is complete.
package download

import (
	"bytes"
	"context"
	"encoding"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/pace"
	"github.com/quak-photos/quak/download/rate"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/errs"
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

// ResumePoint is what a later run needs to take a download up again: the
// temp file, how far its authenticated plaintext goes, the public bytes
// from which the stream state is rebuilt with the file key, and what
// identifies the object. It holds no key material.
type ResumePoint struct {
	Temp   string `json:"temp"`
	Offset int64  `json:"offset"` // ciphertext bytes covered
	Chunks int    `json:"chunks"`
	MACXor []byte `json:"macXor"` // XOR of the chunks' MAC prefixes (public)
	Plain  int64  `json:"plain"`  // plaintext bytes in Temp
	ETag   string `json:"etag,omitempty"`
	Total  int64  `json:"total"`
	Header string `json:"header"` // the file's decryption header: the content it belongs to
	// PrefixHash is the BLAKE2b-512 (base64) of the plaintext in Temp, so
	// bytes that changed on disk, or another download's temp file, are
	// noticed before anything is fetched; empty in older points.
	PrefixHash string `json:"prefixHash,omitempty"`
}

// Objects are where files' encrypted bytes come from: an account's API
// client, or a public link's; *apiclient.Client is one.
type Objects interface {
	DownloadFile(ctx context.Context, fileID int64) (*apiclient.Object, error)
	DownloadFileFrom(ctx context.Context, fileID, offset int64) (*apiclient.Object, error)
	DownloadFileRange(ctx context.Context, fileID, from, to int64) (*apiclient.Object, error)
	DownloadObjectRange(ctx context.Context, rawURL string, from, to int64) (*apiclient.Object, error)
}

// Fetcher downloads files through an API client with a retry policy.
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
	// MultiFiles is how many files may come as several ranges at once (0:
	// MultiStreamFiles); each keeps Streams+1 chunks on disk beside its
	// temp file (see ahead.go).
	MultiFiles int
	// Rate, if set, caps the bytes a second of every download together.
	Rate *rate.Limiter

	noRange   atomic.Bool // the store answered a Range with the whole object
	multiOnce sync.Once
	multi     chan struct{}
	extras    chan struct{} // places for downloads whose ring was left over
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
	rs := &resume{}
	if t.Resume != nil {
		if err := rs.load(t, dir); err != nil {
			rs.drop() // not resumable after all: start from byte 0
		} else {
			rs.rollForward(f.ringSlots())
		}
	}
	p, err := f.fetch(ctx, t, dir, rs)
	if err == nil && p.HashMismatch && p.resumed {
		p.Discard()
		p, err = f.fetch(ctx, t, dir, &resume{whole: true})
	}
	if err != nil {
		return nil, fmt.Errorf("file %d: %w", t.FileID, err)
	}
	return p, nil
}

// fetch runs the retried attempts on rs. A failure a later run can take
// up (transient, or the run stopped by Ctrl-C or SIGTERM; whole chunks
// kept) is saved for it; otherwise the temp file goes and any recorded
// point is forgotten.
func (f *Fetcher) fetch(ctx context.Context, t Target, dir string, rs *resume) (*Partial, error) {
	var p *Partial
	err := f.withRetry(ctx, func(ctx context.Context) error {
		var err error
		p, err = f.attempt(ctx, t, dir, rs)
		return err
	})
	switch {
	case err != nil && f.Save != nil && rs.kept() && (retry.Classify(err) == retry.Transient || ctx.Err() != nil):
		f.save(t, rs) // the next run takes it up from here: after a cut, or a stopped run
		rs.close()
	case err != nil:
		rs.drop()
		f.forget(t, rs)
	default:
		f.forget(t, rs)
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
func (f *Fetcher) attempt(ctx context.Context, t Target, dir string, rs *resume) (p *Partial, err error) {
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
	obj, err := f.answer(ctx, t, rs)
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
	f.saveStart(t, rs, obj)
	h := keys.NewHash()
	r, err := f.reader(t, rs, obj.Body, size, h)
	if err != nil {
		rs.drop()
		return nil, err
	}
	defer r.Release()
	base, resumed := rs.plain, rs.active()
	f.saveAlong(t, rs, r, h, size)
	n, err := copyOut(rs.tmp, base, size, r, h, f.OnBytes)
	moved = n
	if err != nil {
		if errors.Is(err, errs.ErrCorrupted) && forgetKept(obj.Body, r) {
			// Bytes quak kept on disk, not the server's: fetch them again.
			err = fmt.Errorf("%w (%s)", errKeptBad, err.Error())
		}
		f.keep(rs, r, h, base+n, err, ctx.Err() != nil)
		return nil, err
	}
	p = &Partial{f: rs.tmp, Size: base + n, Hash: h.Sum(nil), resumed: resumed}
	rs.handOver() // the temp file now belongs to p
	if t.Hash != "" {
		p.HashMismatch = !hashEqual(t.Hash, p.Hash)
	}
	return p, nil
}

// answer opens the object: the rest of it after rs's checkpoint when the
// store provably continues the same object, else all of it, with rs
// emptied for a start from byte 0. An error opening the rest keeps rs for
// the next attempt.
func (f *Fetcher) answer(ctx context.Context, t Target, rs *resume) (*apiclient.Object, error) {
	if rs.active() {
		obj, err := f.open(ctx, t, rs.cp.Offset, rs)
		var ae *errs.ApiError
		switch {
		case errors.As(err, &ae) && ae.Status == 416:
			obj = nil // the store will not give that range: start over
		case err != nil:
			return nil, err // keep what we have for the next attempt
		case !rs.sameObject(obj) && obj.Status != 200:
			obj.Body.Close()
			obj = nil
		}
		if obj == nil || obj.Status == 200 {
			if err := rs.restart(); err != nil {
				rs.drop()
				if obj != nil {
					obj.Body.Close()
				}
				return nil, err
			}
		}
		if obj != nil {
			return obj, nil
		}
	}
	return f.open(ctx, t, 0, rs)
}

// reader decrypts body into the temp file: a fresh stream into a new (or
// emptied) temp file, or the kept one taken up at its checkpoint, cutting
// off any bytes of a chunk that never authenticated and restoring the
// running hash h.
func (f *Fetcher) reader(t Target, rs *resume, body io.Reader, size int64, h hash.Hash) (*secretstream.Reader, error) {
	if !rs.active() {
		// From byte 0, into the temp file emptied (one kept by a point
		// before any chunk may hold bytes past it).
		if err := rs.restart(); err != nil {
			return nil, err
		}
		return secretstream.NewReader(t.Key, t.Header, body, size)
	}
	if err := rs.tmp.Truncate(rs.plain); err != nil {
		return nil, err
	}
	if _, err := rs.tmp.Seek(rs.plain, io.SeekStart); err != nil {
		return nil, err
	}
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(rs.hash); err != nil {
		return nil, err
	}
	return secretstream.Resume(rs.cp, body, size)
}

// saveAlong has a large download record a resume point after its first
// chunk and then every SaveSpacing bytes as its chunks authenticate, and
// log every chunk's MACXor between them, so that a kill costs no more than
// the chunks in flight (see ahead.go).
func (f *Fetcher) saveAlong(t Target, rs *resume, r *secretstream.Reader, h hash.Hash, size int64) {
	if f.Save == nil || f.SaveAbove <= 0 || size <= f.SaveAbove || rs.whole {
		return
	}
	saved, every := rs.cp.Offset, SaveSpacing(size)
	first := true
	tmp, etag, total := rs.tmp, rs.etag, rs.total
	r.OnCheckpoint = func(cp secretstream.Checkpoint) {
		rs.record(cp)
		due := cp.Offset-saved >= every
		if !due && !first {
			return
		}
		first = false
		state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil {
			return
		}
		if due {
			saved = cp.Offset
		}
		rs.saved = true
		f.save(t, &resume{tmp: tmp, cp: cp, plain: int64(cp.Chunks) * secretstream.ChunkSize, hash: state, etag: etag, total: total})
	}
}

// saveStart records a point before any chunk for a large download whose
// ranges have started to fill its ring, so that a kill before its first
// chunk is decrypted keeps what the ring holds.
func (f *Fetcher) saveStart(t Target, rs *resume, obj *apiclient.Object) {
	if f.Save == nil || f.SaveAbove <= 0 || rs.total <= f.SaveAbove || rs.whole || rs.active() || rs.ahead == nil || rs.saved {
		return
	}
	if _, ok := obj.Body.(ringBody); !ok {
		return
	}
	cp, err := secretstream.Start(t.Key, t.Header)
	if err != nil {
		return
	}
	state, err := keys.NewHash().(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return
	}
	rs.saved = true
	f.save(t, &resume{tmp: rs.tmp, cp: cp, hash: state, etag: obj.ETag, total: rs.total})
}

// copyOut writes r's plaintext to tmp (from offset base, directly to disk
// for large files) and to h, reporting progress to onBytes.
func copyOut(tmp *os.File, base, size int64, r *secretstream.Reader, h hash.Hash, onBytes func(int64)) (int64, error) {
	var out io.Writer = tmp
	var dw *directWriter
	if size >= directMin {
		if dw = newDirectWriter(tmp, base); dw != nil {
			out = dw
		}
	}
	w := io.MultiWriter(out, h)
	if onBytes != nil {
		w = io.MultiWriter(w, progress(onBytes))
	}
	n, err := r.WriteTo(w)
	if err == nil && dw != nil {
		err = dw.finish()
	}
	if err != nil && dw != nil {
		dw.close()
	}
	return n, err
}

func (f *Fetcher) tempFile(dir string) (*os.File, error) {
	if f.TempFile != nil {
		return f.TempFile(dir)
	}
	return os.CreateTemp(dir, durable.TempPrefix+"*")
}

// progress reports the length of every write.
type progress func(int64)

func (p progress) Write(b []byte) (int, error) {
	p(int64(len(b)))
	return len(b), nil
}

func hashEqual(want string, got []byte) bool {
	w, err := keys.DecodeB64(want)
	return err == nil && bytes.Equal(w, got)
}

// Commit gives the file its final name and mode (see durable.Temp.Commit).
func (p *Partial) Commit(final string, mode os.FileMode, mtime time.Time) error {
	return durable.Wrap(p.f).Commit(final, mode, mtime)
}

// Discard removes the temp file.
func (p *Partial) Discard() { durable.Wrap(p.f).Discard() }
