package download

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"sync"
)

// ring is a large download's chunks fetched ahead of its decrypting
// reader, in a file beside its temp file (temp + aheadSuffix), so that
// neither memory nor a kill costs more than the chunks in flight: chunk j
// in slot j mod slots, each slot one wire chunk long; after the slots, a
// record per slot names the chunk it holds, with how many of its bytes are
// there and their CRC-32C: cleared before the slot is written, moved on
// after each write to it. The ranges write to it instead of to memory, and
// the reader reads it in order. Its places are its slots free for a chunk:
// a chunk holds one from its fetch to its last byte read.
//
// A ring is never trusted: a chunk counts only as far as its record names
// it and its bytes still have the recorded CRC, and it still authenticates
// when it is read, as every chunk does. It is not synced: a kill leaves
// what was written, and a crash of the machine costs at most a refetch.
type ring struct {
	file   *os.File
	slots  int
	places chan struct{}
	mu     sync.Mutex
	over   int // places to keep back as they are given: the ring is to hold fewer
}

// ringSource is how ranges have a download's ring: open opens it (on
// first use); left says an earlier attempt or run left one.
type ringSource struct {
	open func() (*ring, error)
	left bool
}

// slotRecord is the size of a slot's record: the chunk's index + 1 (0:
// none), its length and its CRC-32C.
const slotRecord = 16

// castagnoli is the CRC-32C table the slot records use.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// wholeInRing, when a test sets it, hears of each chunk as it is whole in
// the ring.
var wholeInRing func(j int64)

// copyBufs are the buffers between a body and the ring, and of the checks
// of what a ring holds.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// kept is how much of a chunk the ring holds, and its CRC-32C.
type kept struct {
	n   int64
	sum uint32
}

// at is where chunk j's bytes lie in the ring.
func (r *ring) at(j int64) int64 { return j % int64(r.slots) * WireChunk }

// recordAt is where the record of chunk j's slot lies.
func (r *ring) recordAt(j int64) int64 {
	return int64(r.slots)*WireChunk + j%int64(r.slots)*slotRecord
}

// clear marks the slot of chunk j as holding no chunk, before it is
// written.
func (r *ring) clear(j int64) error {
	var rec [slotRecord]byte
	_, err := r.file.WriteAt(rec[:], r.recordAt(j))
	return err
}

// forget clears the record of chunk j's slot if it still names chunk j (a
// chunk further on may have taken the slot since).
func (r *ring) forget(j int64) error {
	if rec, ok := r.record(j); !ok || binary.LittleEndian.Uint64(rec[0:]) != uint64(j)+1 {
		return nil
	}
	return r.clear(j)
}

// record is the record of chunk j's slot, whatever chunk it names.
func (r *ring) record(j int64) ([slotRecord]byte, bool) {
	var rec [slotRecord]byte
	n, _ := r.file.ReadAt(rec[:], r.recordAt(j))
	return rec, n == len(rec)
}

// mark records that the slot of chunk j holds its first n bytes, with
// CRC-32C sum.
func (r *ring) mark(j, n int64, sum uint32) error {
	var rec [slotRecord]byte
	binary.LittleEndian.PutUint64(rec[0:], uint64(j)+1)
	binary.LittleEndian.PutUint32(rec[8:], uint32(n))
	binary.LittleEndian.PutUint32(rec[12:], sum)
	_, err := r.file.WriteAt(rec[:], r.recordAt(j))
	return err
}

// held is how much of chunk j the ring's slot holds, of the n bytes it
// has, and their CRC-32C: as far as its record says, when the bytes there
// still have the recorded CRC; else nothing. A chunk held in part is
// fetched from there on; one held whole is not fetched at all.
func (r *ring) held(j, n int64) kept {
	rec, ok := r.record(j)
	if !ok || binary.LittleEndian.Uint64(rec[0:]) != uint64(j)+1 {
		return kept{}
	}
	got := int64(binary.LittleEndian.Uint32(rec[8:]))
	if got <= 0 || got > n {
		return kept{}
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	sum, off := uint32(0), r.at(j)
	for left := got; left > 0; {
		m, err := r.file.ReadAt(buf[:min(int64(len(buf)), left)], off)
		if m == 0 || err != nil && (!errors.Is(err, io.EOF) || int64(m) != left) {
			return kept{}
		}
		sum = crc32.Update(sum, castagnoli, buf[:m])
		off, left = off+int64(m), left-int64(m)
	}
	if sum != binary.LittleEndian.Uint32(rec[12:]) {
		return kept{}
	}
	return kept{got, sum}
}

// keptFirst is how much of chunk j, of n bytes, the ring holds in part,
// for ranges that begin at it: taken up from there. One it holds whole was
// not taken up by the roll forward, so it does not authenticate: fetched
// again whole.
func (r *ring) keptFirst(j, n int64) kept {
	if k := r.held(j, n); k.n != n {
		return k
	}
	return kept{}
}

// fill writes want bytes of body to chunk j's slot from byte got of the
// chunk on, adding them to the chunk's CRC-32C sum and recording after
// each write how far the slot goes, and returns how many it wrote. size is
// the chunk's length: a test hears of the chunk once it is whole.
func (r *ring) fill(body io.Reader, j, got, want, size int64, sum *uint32) (int64, error) {
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf, off, n := *bp, r.at(j)+got, int64(0)
	for n < want {
		m, err := io.ReadFull(body, buf[:min(int64(len(buf)), want-n)])
		if m > 0 {
			if _, werr := r.file.WriteAt(buf[:m], off+n); werr != nil {
				return n, werr
			}
			*sum = crc32.Update(*sum, castagnoli, buf[:m])
			n += int64(m)
			if werr := r.mark(j, got+n, *sum); werr != nil {
				return n, werr
			}
			if n == want && got+n == size && wholeInRing != nil {
				wholeInRing(j)
			}
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// readAt reads chunk j's bytes from byte pos of the chunk on into p.
func (r *ring) readAt(p []byte, j, pos int64) (int, error) {
	return r.file.ReadAt(p, r.at(j)+pos)
}

// open makes the ring's places anew, none of them free (see resize), for
// a reader at a chunk that holds one.
func (r *ring) open() {
	r.places = make(chan struct{}, r.slots)
	r.over = 0
}

// take waits for a free place, and reports false when ctx ends first.
func (r *ring) take(ctx context.Context) bool {
	select {
	case <-r.places:
		return true
	case <-ctx.Done():
		return false
	}
}

// give frees a place, or keeps it back while the ring is to hold fewer
// chunks than it holds.
func (r *ring) give() {
	r.mu.Lock()
	if r.over > 0 {
		r.over--
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.places <- struct{}{}
}

// resize has the ring hold by places more chunks at once (fewer, by a
// negative number): more are freed now, fewer are kept back as they are
// given.
func (r *ring) resize(by int) {
	r.mu.Lock()
	if by < 0 {
		r.over -= by
		r.mu.Unlock()
		return
	}
	back := min(r.over, by)
	r.over -= back
	r.mu.Unlock()
	for range by - back {
		r.places <- struct{}{}
	}
}
