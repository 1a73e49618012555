package download

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/errs"
	"github.com/quak-photos/quak/retry"
)

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

// SaveSpacing is how far apart a download of size ciphertext bytes keeps
// its resume points: a sixteenth of it, and at least one chunk. A kill
// anywhere then costs at most a sixteenth of the file beyond the kill
// point (a kill at the middle refetches at most 56%), for 15 fsyncs and
// state writes per file whatever its size.
func SaveSpacing(size int64) int64 {
	return max(secretstream.ChunkSize, size/16)
}

// resume is what an attempt that was cut leaves for the next one: the temp
// file holding the plaintext of every chunk that authenticated, the stream
// state after them, the running hash, and what identifies the object.
//
// A large download keeps two files beside its temp file, so that neither
// memory nor a kill costs more than the chunks in flight: its ring (see
// ring.go), and its MAC log (temp + macsSuffix): after every chunk that
// authenticated, the stream's MACXor (public bytes from the wire). A later
// run that takes the download up at its last resume point goes on from
// there over both (rollForward): over the plaintext written past the point,
// each chunk encrypted again must give the MACXor the log holds; then over
// the ring, each chunk must authenticate. Neither file is ever trusted:
// damaged, stale or half-written bytes simply end the roll, and the
// download fetches from there. Neither is synced.
type resume struct {
	tmp   *os.File
	cp    secretstream.Checkpoint
	plain int64  // plaintext bytes in tmp that the checkpoint covers
	hash  []byte // the BLAKE2b state after them
	etag  string // of the first answer, when it had one
	total int64  // the object's size, from the first answer
	// whole: every attempt starts from byte 0 and nothing is kept between
	// them (the second try after a hash mismatch of a resumed download).
	whole bool
	saved bool // a resume point was recorded for this download
	// ring and macs are the temp file's side files, once opened.
	ring *ring
	macs *os.File
}

// The side files' names: the temp file's, and these.
const (
	aheadSuffix = ".ahead"
	macsSuffix  = ".macs"
)

// SideFiles are the files a download keeps beside its temp file temp, for
// a later run to take up with it (or to remove with it).
func SideFiles(temp string) []string { return []string{temp + aheadSuffix, temp + macsSuffix} }

// takeUp is the resume of t's download: taken up at t.Resume and rolled
// forward over what the temp folder dir holds, when it can be (a ring left
// there is one of slots chunks), else empty, for a start from byte 0.
func takeUp(t Target, dir string, slots int) *resume {
	rs := &resume{}
	if t.Resume != nil {
		if err := rs.load(t, dir, slots); err != nil {
			rs.drop() // not resumable after all: start from byte 0
		} else {
			rs.rollForward()
		}
	}
	return rs
}

// load takes up a download a former run left: the temp file must be a
// regular file in dir (a path elsewhere is never touched, a symlink never
// followed), belong to this content and hold the plaintext the point
// says; its hash is computed again and the stream state rebuilt from the
// file key. A ring it left is read as one of slots chunks.
func (rs *resume) load(t Target, dir string, slots int) error {
	p := t.Resume
	if !InTempDir(dir, p.Temp) {
		return errors.New("resume point outside the temp folder")
	}
	if p.Header != keys.EncodeB64(t.Header) || len(p.MACXor) != 8 || p.Plain != int64(p.Chunks)*secretstream.ChunkSize ||
		(t.Size >= 0 && p.Total != t.Size) {
		removeKept(p.Temp)
		return errors.New("resume point does not fit")
	}
	tmp, err := openTempFile(p.Temp)
	if err != nil {
		removeKept(p.Temp)
		return err
	}
	rs.tmp = tmp
	h := keys.NewHash()
	if n, err := io.Copy(h, io.LimitReader(tmp, p.Plain)); err != nil || n != p.Plain {
		return errors.New("the temp file is shorter than its resume point")
	}
	if p.PrefixHash != "" && keys.EncodeB64(h.Sum(nil)) != p.PrefixHash {
		return errors.New("the temp file does not hold the bytes its resume point recorded")
	}
	rs.openSides(slots)
	cp := secretstream.Checkpoint{Offset: p.Offset, Chunks: p.Chunks}
	copy(cp.MACXor[:], p.MACXor)
	if p.Chunks == 0 && p.Offset == 0 {
		cp, err = secretstream.Start(t.Key, t.Header) // a point before any chunk: its ring is what it keeps
	} else {
		cp, err = secretstream.Replay(t.Key, t.Header, cp)
	}
	if err != nil {
		return err
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return err
	}
	rs.cp, rs.plain, rs.hash, rs.etag, rs.total = cp, p.Plain, state, p.ETag, p.Total
	return nil
}

// openSides opens the side files a former run left, if any, its ring as
// one of slots chunks.
func (rs *resume) openSides(slots int) {
	if f, err := openTempFile(rs.tmp.Name() + aheadSuffix); err == nil {
		rs.ring = &ring{file: f, slots: slots}
	}
	if f, err := openTempFile(rs.tmp.Name() + macsSuffix); err == nil {
		rs.macs = f
	}
}

// rollForward takes a download just taken up past its checkpoint over
// what the temp folder holds (see resume), up to the first chunk that does
// not fit. It never takes the object's last chunk, so a download taken up
// always ends on a FINAL chunk read from the wire: the MAC log has no entry
// after a FINAL chunk, and the Stepper opens no FINAL chunk.
func (rs *resume) rollForward() {
	h := keys.NewHash()
	if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(rs.hash) != nil {
		return
	}
	st := secretstream.NewStepper()
	defer st.Release()
	for rs.replayPlain(st, h) {
	}
	for rs.replayAhead(st, h) {
	}
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		rs.drop() // the hash no longer matches the point: start over
		return
	}
	rs.hash = state
}

// replayPlain takes the chunk after the checkpoint from the plaintext
// written past it, if it encrypts again to the recorded MACXor.
func (rs *resume) replayPlain(st *secretstream.Stepper, h hash.Hash) bool {
	want, ok := rs.recorded(rs.cp.Chunks + 1)
	if !ok {
		return false
	}
	buf := st.Plain()
	if n, _ := rs.tmp.ReadAt(buf, rs.plain); n != len(buf) {
		return false
	}
	snapshot, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return false
	}
	_, _ = h.Write(buf) // before Reseal, which encrypts buf in place
	next, err := st.Reseal(rs.cp, len(buf))
	if err != nil || next.MACXor != want {
		_ = h.(encoding.BinaryUnmarshaler).UnmarshalBinary(snapshot)
		return false
	}
	rs.cp, rs.plain = next, rs.plain+int64(len(buf))
	return true
}

// replayAhead takes the chunk after the checkpoint from the ring, if it
// authenticates there, writing its plaintext to the temp file.
func (rs *resume) replayAhead(st *secretstream.Stepper, h hash.Hash) bool {
	if rs.ring == nil {
		return false
	}
	wire := st.Wire()
	if n, _ := rs.ring.readAt(wire, int64(rs.cp.Chunks), 0); n != len(wire) {
		return false
	}
	plain, next, err := st.Open(rs.cp, len(wire))
	if err != nil {
		return false
	}
	if _, err := rs.tmp.WriteAt(plain, rs.plain); err != nil {
		return false
	}
	_, _ = h.Write(plain)
	rs.record(next)
	rs.cp, rs.plain = next, rs.plain+int64(len(plain))
	return true
}

// answer opens the object through src: the rest of it after the
// checkpoint when the store provably continues the same object, else all
// of it, with rs emptied for a start from byte 0. An error opening the
// rest keeps rs for the next attempt.
func (rs *resume) answer(ctx context.Context, src *source, t Target) (*apiclient.Object, error) {
	if rs.active() {
		obj, err := src.open(ctx, t, rs.cp.Offset, rs.ringSource(src.slots()))
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
	return src.open(ctx, t, 0, rs.ringSource(src.slots()))
}

// sameObject reports whether a ranged answer continues the object the
// checkpoint came from: 206, from exactly the offset to the end, of the
// same total size, with the same ETag when the first answer had one. Bytes
// of two different objects are never spliced.
func (rs *resume) sameObject(obj *apiclient.Object) bool {
	return rangeIs(obj, rs.cp.Offset, rs.total-1, rs.total) && (rs.etag == "" || obj.ETag == rs.etag)
}

// restart keeps the temp file but empties it, for a start from byte 0.
func (rs *resume) restart() error {
	if rs.tmp == nil {
		return nil
	}
	if err := rs.tmp.Truncate(0); err != nil {
		return err
	}
	_, err := rs.tmp.Seek(0, io.SeekStart)
	rs.cp, rs.plain, rs.hash = secretstream.Checkpoint{}, 0, nil
	return err
}

// reader decrypts body into the temp file: a fresh stream into a new (or
// emptied) temp file, or the kept one taken up at its checkpoint, cutting
// off any bytes of a chunk that never authenticated and restoring the
// running hash h.
func (rs *resume) reader(t Target, body io.Reader, size int64, h hash.Hash) (*secretstream.Reader, error) {
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

// saving is how a download keeps resume points: save records one for a
// later run, or forgets it (nil: none are kept); as it goes, for downloads
// of more than above bytes only. had: the download was given one.
type saving struct {
	save  func(*ResumePoint)
	above int64
	had   bool
}

// wants reports whether a download of size bytes keeps points.
func (sv saving) wants(size int64) bool { return sv.save != nil && sv.above > 0 && size > sv.above }

// keep records rs's point, once its temp file is durable, for the file of
// decryption header header.
func (sv saving) keep(rs *resume, header []byte) {
	if p := rs.point(header); p != nil {
		sv.save(p)
	}
}

// forget removes the download's resume point, if one was ever recorded.
func (sv saving) forget(rs *resume) {
	if sv.save != nil && (sv.had || rs.saved) {
		sv.save(nil)
	}
}

// saveStart records a point before any chunk for a large download whose
// ranges have started to fill its ring, so that a kill before its first
// chunk is decrypted keeps what the ring holds. Such a point names no
// stream state: the next run starts the stream afresh from the file key.
func (rs *resume) saveStart(sv saving, header []byte, obj *apiclient.Object) {
	if !sv.wants(rs.total) || rs.whole || rs.active() || rs.ring == nil || rs.saved {
		return
	}
	if _, ok := obj.Body.(ringBody); !ok {
		return
	}
	state, err := keys.NewHash().(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return
	}
	rs.saved = true
	sv.keep(&resume{tmp: rs.tmp, hash: state, etag: obj.ETag, total: rs.total}, header)
}

// saveAlong has a large download record a resume point after its first
// chunk and then every SaveSpacing bytes as its chunks authenticate, and
// log every chunk's MACXor between them, so that a kill costs no more than
// the chunks in flight. header is the file's decryption header.
func (rs *resume) saveAlong(sv saving, header []byte, r *secretstream.Reader, h hash.Hash, size int64) {
	if !sv.wants(size) || rs.whole {
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
		sv.keep(&resume{tmp: tmp, cp: cp, plain: int64(cp.Chunks) * secretstream.ChunkSize, hash: state, etag: etag, total: total}, header)
	}
}

// record notes in the MAC log (opened on first use) the MACXor after cp's
// chunks. A log that cannot be written costs only a later refetch.
func (rs *resume) record(cp secretstream.Checkpoint) {
	if rs.macs == nil {
		f, err := openSide(rs.tmp, macsSuffix)
		if err != nil {
			return
		}
		rs.macs = f
	}
	_, _ = rs.macs.WriteAt(cp.MACXor[:], int64(cp.Chunks)*8)
}

// recorded is the MACXor the log holds for after chunks chunks.
func (rs *resume) recorded(chunks int) ([8]byte, bool) {
	var x [8]byte
	if rs.macs == nil {
		return x, false
	}
	n, _ := rs.macs.ReadAt(x[:], int64(chunks)*8)
	return x, n == len(x)
}

// failed leaves a failed attempt's bytes for the next attempt (see keep),
// and returns the attempt's error: a chunk that fails to authenticate is
// the server's damage, unless it came from the ring body read (see
// forgetKept), which the next attempt fetches again.
func (rs *resume) failed(err error, body io.Reader, r *secretstream.Reader, h hash.Hash, written int64, stopped bool) error {
	if errors.Is(err, errs.ErrCorrupted) && forgetKept(body, r) {
		err = fmt.Errorf("%w (%s)", errKeptBad, err.Error())
	}
	rs.keep(r, h, written, err, stopped)
	return err
}

// errKeptBad ends an attempt whose failing chunk came from the ring: its
// record and CRC held, yet it does not authenticate (another download's
// ring, bytes written over). The next attempt fetches it again, without
// the ring. It is transient, as a cut answer is.
var errKeptBad = fmt.Errorf("a chunk kept on disk does not authenticate: %w", io.ErrUnexpectedEOF)

// forgetKept reports whether the chunk r failed on came from the ring of
// body, whole or in part. If so it stops body and clears the records of
// the chunks it took from the ring from there on, which the next attempt
// fetches again; the chunks it fetched itself stay.
func forgetKept(body io.Reader, r *secretstream.Reader) bool {
	b, ok := body.(ringBody)
	cp, _ := r.Checkpoint()
	if !ok || !b.fromRing(int64(cp.Chunks)) {
		return false
	}
	_ = b.Close() // no worker writes to the ring after
	b.forgetKept(int64(cp.Chunks))
	return true
}

// keep records where a cut attempt can be taken up again, or drops the
// temp file when it cannot: the error is not one a retry may fix (a run
// stopped, by Ctrl-C or SIGTERM, is one a later run may), or the bytes
// written do not match the checkpoint. With no chunk authenticated yet,
// only a ring is worth keeping: the download starts from byte 0 again,
// reading what the ring holds.
func (rs *resume) keep(r *secretstream.Reader, h hash.Hash, written int64, err error, stopped bool) {
	if rs.whole || !stopped && retry.Classify(err) != retry.Transient {
		rs.drop()
		return
	}
	cp, ok := r.Checkpoint()
	switch {
	case !ok && rs.ring != nil:
		cp, h, written = secretstream.Checkpoint{}, keys.NewHash(), 0
	case !ok || written != int64(cp.Chunks)*secretstream.ChunkSize:
		rs.drop()
		return
	}
	state, merr := h.(encoding.BinaryMarshaler).MarshalBinary()
	if merr != nil {
		rs.drop()
		return
	}
	rs.cp, rs.plain, rs.hash = cp, written, state
}

// end leaves a download as its attempts ended with err: a failure a later
// run can take up (transient, or the run stopped by Ctrl-C or SIGTERM;
// whole chunks or a ring kept) is saved for it; otherwise the temp file
// goes (but one a Partial holds) and any recorded point is forgotten.
func (rs *resume) end(sv saving, header []byte, err error, stopped bool) {
	switch {
	case err != nil && sv.save != nil && rs.kept() && (retry.Classify(err) == retry.Transient || stopped):
		sv.keep(rs, header) // the next run takes it up from here: after a cut, or a stopped run
		rs.close()
	case err != nil:
		rs.drop()
		sv.forget(rs)
	default:
		sv.forget(rs)
	}
}

// point is the resume point of rs for a file of decryption header header,
// once its temp file is durable; nil when it cannot be made so.
func (rs *resume) point(header []byte) *ResumePoint {
	if rs.tmp.Sync() != nil {
		return nil
	}
	return &ResumePoint{Temp: rs.tmp.Name(), Offset: rs.cp.Offset, Chunks: rs.cp.Chunks,
		MACXor: append([]byte(nil), rs.cp.MACXor[:]...), Plain: rs.plain, ETag: rs.etag, Total: rs.total,
		Header: keys.EncodeB64(header), PrefixHash: sumOf(rs.hash)}
}

// sumOf is the hash (base64) of the bytes a marshalled BLAKE2b state has
// taken in, or "" when it cannot be read.
func sumOf(state []byte) string {
	h := keys.NewHash()
	if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state) != nil {
		return ""
	}
	return keys.EncodeB64(h.Sum(nil))
}

// kept reports whether an attempt left anything for the next: chunks
// that authenticated, or a ring.
func (rs *resume) kept() bool { return rs.tmp != nil && (rs.active() || rs.ring != nil) }

// active reports whether there is anything to resume from.
func (rs *resume) active() bool { return rs.tmp != nil && rs.cp.Offset > 0 }

// handOver leaves the temp file to a Partial: the side files go, and rs
// holds nothing of the download any more.
func (rs *resume) handOver() {
	rs.closeSides(true)
	*rs = resume{whole: rs.whole, saved: rs.saved}
}

// close closes the temp file and its side files, which stay for a later
// run.
func (rs *resume) close() {
	rs.closeSides(false)
	_ = rs.tmp.Close()
}

// drop forgets the partial download and removes its temp file and side
// files.
func (rs *resume) drop() {
	if rs.tmp != nil {
		rs.closeSides(true)
		_ = rs.tmp.Close()
		_ = os.Remove(rs.tmp.Name())
	}
	*rs = resume{whole: rs.whole, saved: rs.saved}
}

// ringSource is the download's ring of slots chunks, for ranges.
func (rs *resume) ringSource(slots int) ringSource {
	return ringSource{open: func() (*ring, error) { return rs.ringOf(slots) }, left: rs.ring != nil}
}

// ringOf is the download's ring of slots chunks, opened on first use.
func (rs *resume) ringOf(slots int) (*ring, error) {
	if rs.ring == nil {
		f, err := openSide(rs.tmp, aheadSuffix)
		if err != nil {
			return nil, err
		}
		rs.ring = &ring{file: f, slots: slots}
	}
	return rs.ring, nil
}

// openSide opens, creating it, a side file of the temp file tmp: a
// regular file of one name only, never through a symlink. Anything else at
// its name (a symlink, a pipe, an empty folder, another name of some other
// file) is removed first: the temp folder is quak's alone.
func openSide(tmp *os.File, suffix string) (*os.File, error) {
	p := tmp.Name() + suffix
	if fi, err := os.Lstat(p); err == nil && !ownFile(fi) {
		if err := os.Remove(p); err != nil {
			return nil, err
		}
	}
	return openOwn(p, os.O_CREATE)
}

// closeSides closes the side files; remove also deletes them.
func (rs *resume) closeSides(remove bool) {
	if rs.ring != nil {
		_ = rs.ring.file.Close()
	}
	if rs.macs != nil {
		_ = rs.macs.Close()
	}
	rs.ring, rs.macs = nil, nil
	if remove && rs.tmp != nil {
		for _, p := range SideFiles(rs.tmp.Name()) {
			_ = os.Remove(p)
		}
	}
}

// InTempDir reports whether path names a file directly in the temp folder
// dir, by a name quak gives temp files.
func InTempDir(dir, path string) bool {
	return filepath.Dir(path) == filepath.Clean(dir) && strings.HasPrefix(filepath.Base(path), durable.TempPrefix)
}

// openTempFile opens a kept temp file for writing: a regular file of one
// name only (never another name of a file quak does not own), never
// through a symlink.
func openTempFile(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err != nil || !ownFile(fi) {
		return nil, fmt.Errorf("%s is not a regular file of its own", filepath.Base(path))
	}
	return openOwn(path, 0) // no window to swap in a symlink
}

// ownFile reports whether fi is a regular file of one name only.
func ownFile(fi os.FileInfo) bool { return fi.Mode().IsRegular() && oneName(fi) }

// openOwn opens path to read and write it (flag os.O_CREATE makes it if
// need be), never through a symlink, and keeps it open only when it is a
// regular file of one name.
func openOwn(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|flag|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !ownFile(fi) {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	return f, nil
}

// removeKept removes a kept temp file in the temp folder and its side
// files: a symlink itself, never its target.
func removeKept(temp string) {
	for _, p := range append(SideFiles(temp), temp) {
		_ = os.Remove(p)
	}
}

// RemoveLeftovers empties the temp folder dir of what interrupted runs
// left, but the paths in keep (downloads a later run takes up), and
// returns how many entries it removed. It looks nowhere else: outside
// dir, a name is never a reason to delete a file; a dir that is a symbolic
// link is refused, not followed.
func RemoveLeftovers(dir string, keep map[string]bool) (int, error) {
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return 0, fmt.Errorf("temp area %s is not a folder (a symbolic link?): not swept", dir)
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if keep[p] {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
