package download

import (
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download/secretstream"
)

// A large download keeps two files beside its temp file, so that neither
// memory nor a kill costs more than the chunks in flight:
//
//   - the ring (temp + aheadSuffix): the chunks that ranges fetched ahead
//     of the decrypting reader, chunk j in slot j mod slots. The ranges
//     write to it instead of to memory, and the reader reads it in order.
//     After the slots, a record per slot names the chunk it holds, with
//     how many of its bytes and their CRC-32C: cleared before the slot is
//     written, moved on after each write to it.
//   - the MAC log (temp + macsSuffix): after every chunk that
//     authenticated, the stream's MACXor (public bytes from the wire).
//
// A later run that takes the download up at its last resume point goes
// on from there over both (rollForward): over the plaintext written past
// the point, each chunk encrypted again must give the MACXor the log
// holds; then over the ring, each chunk must authenticate. Neither file is
// ever trusted: damaged, stale or half-written bytes simply end the roll,
// and the download fetches from there. Neither is synced: a kill leaves
// what was written, and a crash of the machine costs at most a refetch.
const (
	aheadSuffix = ".ahead"
	macsSuffix  = ".macs"
)

// SideFiles are the files a download keeps beside its temp file temp, for
// a later run to take up with it (or to remove with it).
func SideFiles(temp string) []string { return []string{temp + aheadSuffix, temp + macsSuffix} }

// openSide opens, creating it, a side file of the temp file tmp: a
// regular file of one name only, never through a symlink. Anything else at
// its name (a symlink, a pipe, an empty folder, another name of some other
// file) is removed first: the temp folder is quak's alone.
func openSide(tmp *os.File, suffix string) (*os.File, error) {
	p := tmp.Name() + suffix
	if fi, err := os.Lstat(p); err == nil && (!fi.Mode().IsRegular() || !oneName(fi)) {
		if err := os.Remove(p); err != nil {
			return nil, err
		}
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || !oneName(fi) {
		_ = f.Close()
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(p))
	}
	return f, nil
}

// ringSlots is how many chunks the ring of a Fetcher holds: one for each
// range in flight and one being read.
func (f *Fetcher) ringSlots() int { return max(f.Streams, 1) + 1 }

// slotAt is where chunk j's ciphertext lies in a ring of slots chunks.
func slotAt(j int64, slots int) int64 { return j % int64(slots) * WireChunk }

// wholeInRing, when a test sets it, hears of each chunk as it is whole in
// the ring.
var wholeInRing func(j int64)

// slotRecord is the size of a slot's record: the chunk's index + 1 (0:
// none), its length and its CRC-32C.
const slotRecord = 16

// castagnoli is the CRC-32C table the slot records use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordAt is where slot s's record lies in a ring of slots chunks.
func recordAt(s int64, slots int) int64 { return int64(slots)*WireChunk + s*slotRecord }

// clearSlot marks the slot of chunk j as holding no chunk, before it is
// written.
func clearSlot(ring *os.File, j int64, slots int) error {
	var rec [slotRecord]byte
	_, err := ring.WriteAt(rec[:], recordAt(j%int64(slots), slots))
	return err
}

// forgetSlot clears the record of chunk j's slot if it still names chunk
// j (a chunk further on may have taken the slot since).
func forgetSlot(ring *os.File, j int64, slots int) error {
	var rec [slotRecord]byte
	if n, _ := ring.ReadAt(rec[:], recordAt(j%int64(slots), slots)); n != len(rec) || binary.LittleEndian.Uint64(rec[0:]) != uint64(j)+1 {
		return nil
	}
	return clearSlot(ring, j, slots)
}

// markSlot records that the slot of chunk j holds its first n bytes, with
// CRC-32C sum.
func markSlot(ring *os.File, j int64, slots int, n int64, sum uint32) error {
	var rec [slotRecord]byte
	binary.LittleEndian.PutUint64(rec[0:], uint64(j)+1)
	binary.LittleEndian.PutUint32(rec[8:], uint32(n))
	binary.LittleEndian.PutUint32(rec[12:], sum)
	_, err := ring.WriteAt(rec[:], recordAt(j%int64(slots), slots))
	return err
}

// held is how much of chunk j the ring's slot holds, of the n bytes it
// has, and their CRC-32C: as far as its record says, when the bytes there
// still have the recorded CRC; else 0. A chunk held in part is fetched
// from there on; one held whole is not fetched at all. Either way it
// still authenticates when it is read, like any other.
func held(ring *os.File, j int64, slots int, n int64, buf []byte) (int64, uint32) {
	var rec [slotRecord]byte
	if m, _ := ring.ReadAt(rec[:], recordAt(j%int64(slots), slots)); m != len(rec) ||
		binary.LittleEndian.Uint64(rec[0:]) != uint64(j)+1 {
		return 0, 0
	}
	got := int64(binary.LittleEndian.Uint32(rec[8:]))
	if got <= 0 || got > n {
		return 0, 0
	}
	sum, off := uint32(0), slotAt(j, slots)
	for left := got; left > 0; {
		m, err := ring.ReadAt(buf[:min(int64(len(buf)), left)], off)
		if m == 0 || err != nil && (!errors.Is(err, io.EOF) || int64(m) != left) {
			return 0, 0
		}
		sum = crc32.Update(sum, castagnoli, buf[:m])
		off, left = off+int64(m), left-int64(m)
	}
	if sum != binary.LittleEndian.Uint32(rec[12:]) {
		return 0, 0
	}
	return got, sum
}

// aheadFile is the download's ring, opened on first use.
func (rs *resume) aheadFile() (*os.File, error) {
	if rs.ahead == nil {
		f, err := openSide(rs.tmp, aheadSuffix)
		if err != nil {
			return nil, err
		}
		rs.ahead = f
	}
	return rs.ahead, nil
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

// errKeptBad ends an attempt whose failing chunk came from the ring: its
// record and CRC held, yet it does not authenticate (another download's
// ring, bytes written over). The next attempt fetches it again, without
// the ring. It is transient, as a cut answer is.
var errKeptBad = fmt.Errorf("a chunk kept on disk does not authenticate: %w", io.ErrUnexpectedEOF)

// ringBody is an answer read, in part, from the ring.
type ringBody interface {
	io.Closer
	fromRing(j int64) bool
	forgetKept(from int64)
}

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

// closeSides closes the side files; remove also deletes them.
func (rs *resume) closeSides(remove bool) {
	for _, f := range []*os.File{rs.ahead, rs.macs} {
		if f != nil {
			_ = f.Close()
		}
	}
	rs.ahead, rs.macs = nil, nil
	if remove && rs.tmp != nil {
		for _, p := range SideFiles(rs.tmp.Name()) {
			_ = os.Remove(p)
		}
	}
}

// openSides opens the side files a former run left, if any.
func (rs *resume) openSides() {
	for _, s := range []struct {
		suffix string
		to     **os.File
	}{{aheadSuffix, &rs.ahead}, {macsSuffix, &rs.macs}} {
		if f, err := openTempFile(rs.tmp.Name() + s.suffix); err == nil {
			*s.to = f
		}
	}
}

// rollForward takes a download just taken up past its checkpoint over
// what the temp folder holds (see above), up to the first chunk that does
// not fit. It never takes the object's last chunk, so a download taken up
// always ends on a FINAL chunk read from the wire: the MAC log has no entry
// after a FINAL chunk, and the Stepper opens no FINAL chunk.
func (rs *resume) rollForward(slots int) {
	h := keys.NewHash()
	if h.(encoding.BinaryUnmarshaler).UnmarshalBinary(rs.hash) != nil {
		return
	}
	st := secretstream.NewStepper()
	defer st.Release()
	for rs.replayPlain(st, h) {
	}
	for rs.replayAhead(st, h, slots) {
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
func (rs *resume) replayAhead(st *secretstream.Stepper, h hash.Hash, slots int) bool {
	if rs.ahead == nil {
		return false
	}
	wire := st.Wire()
	if n, _ := rs.ahead.ReadAt(wire, slotAt(int64(rs.cp.Chunks), slots)); n != len(wire) {
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
