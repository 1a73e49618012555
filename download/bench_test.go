package download_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
)

// benchFile serves one file of size bytes from a fake server for the
// benchmark's life, and returns a client of it and the file's target.
func benchFile(b *testing.B, size int64) (*apiclient.Client, download.Target) {
	b.Helper()
	s := enteapitest.New(enteapitest.Config{})
	b.Cleanup(s.Close)
	u := s.AddUser("a@example.org", "pw", enteapitest.UserOptions{})
	a := u.AddAlbum("a")
	f := a.AddFile(enteapitest.FileSpec{Title: "big", Size: size, Seed: 1})
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(http.DefaultTransport.(*http.Transport).Clone(), apiclient.DefaultDeadlines())}
	c := s.Client(hc).WithToken(u.Token())
	e, err := c.CollectionFile(context.Background(), a.ID, f.ID)
	if err != nil {
		b.Fatal(err)
	}
	return c, download.Target{FileID: f.ID, Key: f.Key(), Header: e.File.DecryptionHeader, Size: e.Info.FileSize}
}

// BenchmarkFetch measures one 64 MiB download end to end through the fake
// server on loopback: request, decrypt, hash, write, fsync.
func BenchmarkFetch(b *testing.B) { benchFetch(b, 1) }

// benchFetch measures one 64 MiB download with at most streams ranges at
// once.
func benchFetch(b *testing.B, streams int) {
	b.Helper()
	const size = 64 << 20
	c, t := benchFile(b, size)
	fe := &download.Fetcher{Client: c, Policy: retry.Once(), Streams: streams}
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

// BenchmarkFetchResumePoints measures what resume points cost a 256 MiB
// download: none, against points as a large download keeps them (one after
// its first chunk and 15 a sixteenth of the file apart, each an fsync of
// the temp file and a write of the state database; state-writes/op also
// counts the forgetting at the end).
func BenchmarkFetchResumePoints(b *testing.B) {
	const size = 256 << 20
	c, t := benchFile(b, size)
	for _, points := range []bool{false, true} {
		name := "none"
		if points {
			name = "every sixteenth"
		}
		b.Run(name, func(b *testing.B) {
			dir := b.TempDir()
			st, err := state.Open(filepath.Join(dir, "test.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = st.Close() }()
			fe := &download.Fetcher{Client: c, Policy: retry.Once()}
			saved := 0
			if points {
				fe.SaveAbove = 64 << 20
				fe.Save = func(id int64, rp *download.ResumePoint) {
					saved++
					var v any
					if rp != nil {
						v = rp
					}
					if err := st.PutResume(id, v); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(size)
			for b.Loop() {
				p, err := fe.Fetch(context.Background(), t, dir)
				if err != nil {
					b.Fatal(err)
				}
				p.Discard()
			}
			b.ReportMetric(float64(saved)/float64(b.N), "state-writes/op")
		})
	}
}

// BenchmarkFetchRanges measures one 64 MiB download as eight ranges at once
// (the default for large files), the ranges going to a ring file beside the
// temp file. B/op counts the fake server's allocations too (more for eight
// answers than for one): compare it with BenchmarkFetch of the same run.
func BenchmarkFetchRanges(b *testing.B) { benchFetch(b, download.DefaultStreams) }
