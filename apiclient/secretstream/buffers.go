package secretstream

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Chunk buffers outlive their Reader, so that a run of many downloads does
// not ask the heap for megabytes per file: each fresh buffer costs page
// faults to fill and work for the garbage collector to free. A whole
// chunk's buffer has a pool of its own; smaller ones (streams shorter than
// a chunk) are kept by size class: powers of two up to 64 KiB, then steps
// of 64 KiB, so that above 64 KiB a buffer is less than 64 KiB larger than
// its stream needs (a 1 MiB photo takes 1.06 MiB, not 1.25; with 16 to 32
// downloads in flight, that is 3 to 6 MiB).
const (
	fullBuf   = headroom + ChunkSize + Overhead
	minShift  = 12 // 4 KiB, the smallest class
	stepShift = 16 // 64 KiB: classes above it are its multiples
	step      = 1 << stepShift
	maxClass  = 4 << 20 // the largest class below a whole chunk
	nClasses  = stepShift - minShift + 1 + maxClass/step - 1
)

var (
	fullBufs  = sync.Pool{New: func() any { b := alignedFull(); return &b }}
	classBufs [nClasses]sync.Pool
	// outstanding counts the buffers taken and not given back.
	outstanding atomic.Int64
)

// plainAlign is the alignment of a whole chunk's plaintext in its buffer:
// the block size O_DIRECT asks of memory, so that a chunk can be written
// around the page cache straight from where it was decrypted.
const plainAlign = 4096

// alignedFull returns a whole chunk's buffer whose plaintext (from byte 64
// on) starts on a plainAlign boundary.
func alignedFull() []byte {
	b := make([]byte, fullBuf+plainAlign)
	skip := (plainAlign - int(uintptr(unsafe.Pointer(&b[64]))%plainAlign)) % plainAlign
	return b[skip : skip+fullBuf : skip+fullBuf]
}

// classOf is the index and size of the class holding buffers of n bytes
// (ok false: n is too large for any).
func classOf(n int) (i, size int, ok bool) {
	switch {
	case n <= step:
		s := max(bits.Len(uint(n-1)), minShift)
		return s - minShift, 1 << s, true
	case n <= maxClass:
		k := (n + step - 1) / step // 2…64
		return stepShift - minShift + k - 1, k * step, true
	}
	return 0, 0, false
}

// takeBuf returns a buffer of length n, from a pool when one fits.
func takeBuf(n int) []byte {
	outstanding.Add(1)
	if n == fullBuf {
		return *fullBufs.Get().(*[]byte)
	}
	i, size, ok := classOf(n)
	if !ok {
		return make([]byte, n)
	}
	if p, ok := classBufs[i].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, size)
}

// giveBuf hands b back for another Reader; b must not be used after.
func giveBuf(b []byte) {
	outstanding.Add(-1)
	b = b[:cap(b)]
	if len(b) == fullBuf {
		fullBufs.Put(&b)
		return
	}
	if i, size, ok := classOf(len(b)); ok && size == len(b) {
		classBufs[i].Put(&b)
	}
}

// Outstanding is how many Readers' buffers are taken and not yet given
// back by Release: a caller that releases every Reader it made sees it
// come back to where it was.
func Outstanding() int64 { return outstanding.Load() }
