package download

import (
	"encoding"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/secretstream"
	"github.com/quak-photos/quak/retry"
)

// resume is what an attempt that was cut leaves for the next one: the temp
// file holding the plaintext of every chunk that authenticated, the stream
// state after them, the running hash, and what identifies the object.
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
	// ahead and macs are the temp file's side files (see ahead.go), once
	// opened.
	ahead *os.File
	macs  *os.File
}

// forget removes the download's resume point, if one was ever recorded.
func (f *Fetcher) forget(t Target, rs *resume) {
	if f.Save != nil && (t.Resume != nil || rs.saved) {
		f.Save(t.FileID, nil)
	}
}

// save records rs for a later run, after making its temp file durable.
func (f *Fetcher) save(t Target, rs *resume) {
	if rs.tmp.Sync() != nil {
		return
	}
	f.Save(t.FileID, &ResumePoint{Temp: rs.tmp.Name(), Offset: rs.cp.Offset, Chunks: rs.cp.Chunks,
		MACXor: append([]byte(nil), rs.cp.MACXor[:]...), Plain: rs.plain, ETag: rs.etag, Total: rs.total,
		Header: keys.EncodeB64(t.Header), PrefixHash: sumOf(rs.hash)})
}

// SaveSpacing is how far apart a download of size ciphertext bytes keeps
// its resume points: a sixteenth of it, and at least one chunk. A kill
// anywhere then costs at most a sixteenth of the file beyond the kill
// point (a kill at the middle refetches at most 56%), for 15 fsyncs and
// state writes per file whatever its size.
func SaveSpacing(size int64) int64 {
	return max(secretstream.ChunkSize, size/16)
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

// load takes up a download a former run left: the temp file must be a
// regular file in dir (a path elsewhere is never touched, a symlink never
// followed), belong to this content and hold the plaintext the point
// says; its hash is computed again and the stream state rebuilt from the
// file key.
func (rs *resume) load(t Target, dir string) error {
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
	rs.openSides()
	return nil
}

// removeKept removes a kept temp file in the temp folder and its side
// files: a symlink itself, never its target.
func removeKept(temp string) {
	for _, p := range append(SideFiles(temp), temp) {
		_ = os.Remove(p)
	}
}

// kept reports whether an attempt left anything for the next: chunks
// that authenticated, or a ring.
func (rs *resume) kept() bool { return rs.tmp != nil && (rs.active() || rs.ahead != nil) }

// active reports whether there is anything to resume from.
func (rs *resume) active() bool { return rs.tmp != nil && rs.cp.Offset > 0 }

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

// sameObject reports whether a ranged answer continues the object the
// checkpoint came from: 206, from exactly the offset, of the same total
// size, with the same ETag when the first answer had one. Bytes of two
// different objects are never spliced.
func (rs *resume) sameObject(obj *apiclient.Object) bool {
	if obj.Status != 206 {
		return false
	}
	var start, end, total int64
	if _, err := fmt.Sscanf(obj.ContentRange, "bytes %d-%d/%d", &start, &end, &total); err != nil {
		return false
	}
	return start == rs.cp.Offset && total == rs.total && end == total-1 && (rs.etag == "" || obj.ETag == rs.etag)
}

// keep records where a cut attempt can be taken up again, or drops the
// temp file when it cannot: the error is not one a retry may fix (a run
// stopped, by Ctrl-C or SIGTERM, is one a later run may), or the bytes
// written do not match the checkpoint. With no chunk authenticated yet,
// only a ring is worth keeping: the download starts from byte 0 again,
// reading what the ring holds.
func (f *Fetcher) keep(rs *resume, r *secretstream.Reader, h hash.Hash, written int64, err error, stopped bool) {
	if rs.whole || !stopped && retry.Classify(err) != retry.Transient {
		rs.drop()
		return
	}
	cp, ok := r.Checkpoint()
	switch {
	case !ok && rs.ahead != nil:
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
