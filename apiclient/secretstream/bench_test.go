package secretstream

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchStream decrypts a pre-encrypted stream of n plaintext bytes per
// iteration and reports MB/s of plaintext. allocs/op counts what one whole
// stream allocates (its state and AEAD); allocs/extra-chunk is the steady
// state: what each chunk after the first adds.
func benchStream(b *testing.B, n int, generic bool) {
	b.Helper()
	key := bytes.Repeat([]byte{5}, KeySize)
	header := bytes.Repeat([]byte{6}, HeaderSize)
	ct, err := Encrypt(key, header, make([]byte, n))
	if err != nil {
		b.Fatal(err)
	}
	src := bytes.NewReader(ct)
	r, err := NewReader(key, header, src, int64(len(ct)))
	if err != nil {
		b.Fatal(err)
	}
	run := func(ct []byte) {
		src.Reset(ct)
		r.reset(key, header, int64(len(ct)))
		r.st.generic = generic
		if _, err := r.WriteTo(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		run(ct)
	}
	b.StopTimer()
	if chunks := (n + ChunkSize - 1) / ChunkSize; chunks > 1 {
		one, err := Encrypt(key, header, make([]byte, ChunkSize))
		if err != nil {
			b.Fatal(err)
		}
		whole := testing.AllocsPerRun(3, func() { run(ct) })
		single := testing.AllocsPerRun(3, func() { run(one) })
		b.ReportMetric((whole-single)/float64(chunks-1), "allocs/extra-chunk")
	}
}

// BenchmarkDecrypt measures whole 4 MiB chunks and a 64 MiB stream, through
// the AEAD fast path and through the generic ChaCha20 + Poly1305 path.
func BenchmarkDecrypt(b *testing.B) {
	for _, tc := range []struct {
		name string
		n    int
	}{{"chunk-4MiB", ChunkSize}, {"stream-64MiB", 64 << 20}} {
		for _, generic := range []bool{false, true} {
			path := "fast"
			if generic {
				path = "generic"
			}
			b.Run(fmt.Sprintf("%s/%s", tc.name, path), func(b *testing.B) { benchStream(b, tc.n, generic) })
		}
	}
}

// BenchmarkEncrypt measures the Writer on a 64 MiB stream.
func BenchmarkEncrypt(b *testing.B) {
	key := bytes.Repeat([]byte{5}, KeySize)
	header := bytes.Repeat([]byte{6}, HeaderSize)
	pt := make([]byte, 64<<20)
	b.SetBytes(int64(len(pt)))
	b.ReportAllocs()
	w, err := NewWriter(io.Discard, key, header)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, err := newState(key, header)
		if err != nil {
			b.Fatal(err)
		}
		w.st, w.err, w.n = st, nil, 0
		if _, err := w.Write(pt); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
