package verify

import (
	"context"
	"fmt"
	"testing"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// BenchmarkVerify re-hashes a 256 MiB backup: 32 files of 8 MiB, each in
// two albums, so half the entries are hard links read once. MB/s is the
// re-hash rate from the page cache; B/op is the read buffer plus the
// state, whatever the file sizes: the memory bound README.md states.
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
	b.SetBytes(size * n)
	b.ReportAllocs()
	for b.Loop() {
		sum, err := Run(context.Background(), Options{Dir: fx.dir})
		if err != nil || !sum.OK() || sum.Bytes != size*n {
			b.Fatalf("verify: %v, %+v", err, sum)
		}
	}
}
