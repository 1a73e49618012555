package verify

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// BenchmarkVerify re-hashes a 256 MiB backup: 32 files of 8 MiB, each in
// two albums, so half the entries are hard links read once. It runs one
// file at a time and runtime.NumCPU() at once. MB/s is the re-hash rate
// from the page cache; B/op is a 1 MiB read buffer per worker plus the
// state, whatever the file sizes: the memory bound docs/backup.md states.
func BenchmarkVerify(b *testing.B) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	fx := &fix{s: s, u: s.AddUser("a@example.org", "pw", enteapitest.UserOptions{}), dir: b.TempDir()}
	one, two := fx.u.AddAlbum("One"), fx.u.AddAlbum("Two")
	const size, n = 8 << 20, 32
	for i := 0; i < n; i++ {
		two.Add(one.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%02d.mp4", i), Size: size, Seed: byte(i)}))
	}
	fx.backup(b)
	for _, c := range []int{1, runtime.NumCPU()} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			b.SetBytes(size * n)
			b.ReportAllocs()
			for b.Loop() {
				sum, err := Run(context.Background(), Options{Dir: fx.dir, Concurrency: c})
				if err != nil || !sum.OK() || sum.Bytes != size*n {
					b.Fatalf("verify: %v, %+v", err, sum)
				}
			}
		})
	}
}
