package download_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/retry"
)

// BenchmarkFetch measures one 64 MiB download end to end through the fake
// server on loopback: request, decrypt, hash, write, fsync.
func BenchmarkFetch(b *testing.B) {
	s := enteapitest.New(enteapitest.Config{})
	defer s.Close()
	u := s.AddUser("a@example.org", "pw", enteapitest.UserOptions{})
	a := u.AddAlbum("a")
	const size = 64 << 20
	f := a.AddFile(enteapitest.FileSpec{Title: "big", Size: size, Seed: 1})
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(http.DefaultTransport.(*http.Transport).Clone(), apiclient.DefaultDeadlines())}
	c := s.Client(hc).WithToken(u.Token())
	e, err := c.CollectionFile(context.Background(), a.ID, f.ID)
	if err != nil {
		b.Fatal(err)
	}
	t := download.Target{FileID: f.ID, Key: f.Key(), Header: e.File.DecryptionHeader, Size: e.Info.FileSize}
	fe := &download.Fetcher{Client: c, Policy: retry.Once()}
	dir := b.TempDir()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		p, err := fe.Fetch(context.Background(), t, dir)
		if err != nil {
			b.Fatal(err)
		}
		p.Discard()
	}
}
