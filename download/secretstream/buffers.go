package secretstream

import (
	"math/bits"
	"sync"
)

// Chunk buffers outlive their Reader, so that a run of many downloads does
// not ask the heap for megabytes per file: each fresh buffer costs page
// faults to fill and work for the garbage collector to free. A whole
// chunk's buffer has a pool of its own; smaller ones (streams shorter than
// a chunk) are kept by power-of-two size.
const (
	fullBuf  = headroom + ChunkSize + Overhead
	minClass = 12 // 4 KiB
	maxClass = 22 // 4 MiB
)

var (
	fullBufs  = sync.Pool{New: func() any { b := make([]byte, fullBuf); return &b }}
	classBufs [maxClass + 1]sync.Pool
)

// takeBuf returns a buffer of length n, from a pool when one fits.
func takeBuf(n int) []byte {
	if n == fullBuf {
		return *fullBufs.Get().(*[]byte)
	}
	c := max(bits.Len(uint(n-1)), minClass)
	if c > maxClass {
		return make([]byte, n)
	}
	if p, ok := classBufs[c].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<c)
}

// giveBuf hands b back for another Reader; b must not be used after.
func giveBuf(b []byte) {
	b = b[:cap(b)]
	switch c := bits.Len(uint(len(b) - 1)); {
	case len(b) == fullBuf:
		fullBufs.Put(&b)
	case len(b) == 1<<c && c >= minClass && c <= maxClass:
		classBufs[c].Put(&b)
	}
}
