package thumbnails

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/retry"
)

func fastPolicy(sleeps *[]time.Duration) retry.Policy {
	p := retry.Default()
	p.Sleep = func(ctx context.Context, d time.Duration) error {
		*sleeps = append(*sleeps, d)
		return ctx.Err()
	}
	p.Rand = func() float64 { return 0.5 }
	return p
}

type fixture struct {
	s      *enteapitest.Server
	c      *apiclient.Client
	album  *enteapitest.Album
	file   *enteapitest.File
	header []byte
	enc    []byte
}

func setup(t *testing.T) *fixture {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{})
	t.Cleanup(s.Close)
	u := s.AddUser("a@example.org", "pw", enteapitest.UserOptions{})
	a := u.AddAlbum("one")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Data: []byte("x"), Thumbnail: make([]byte, 4000)})
	header := []byte("0123456789abcdef01234567")
	enc, err := secretstream.SealBlob(f.Key(), header, enteapitest.FakeJPEG("new"))
	require.NoError(t, err)
	return &fixture{s: s, c: s.Client(nil).WithToken(u.Token()), album: a, file: f, header: header, enc: enc}
}

func TestUploadCommits(t *testing.T) {
	fx := setup(t)
	var sleeps []time.Duration
	require.NoError(t, Upload(context.Background(), fx.c, fastPolicy(&sleeps), fx.album.ID, fx.file.ID, fx.header, fx.enc))
	assert.Equal(t, fx.header, fx.file.ThumbnailHeader())
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.Empty(t, sleeps)
}

// The commit lands but its answer is lost: quak must see its header on the
// file and stop, not repeat the call (which museum would answer with 500).
func TestLostAnswerIsReconciledNotRepeated(t *testing.T) {
	fx := setup(t)
	fx.s.Inject("PUT /files/thumbnail", enteapitest.LoseResponse())
	var sleeps []time.Duration
	require.NoError(t, Upload(context.Background(), fx.c, fastPolicy(&sleeps), fx.album.ID, fx.file.ID, fx.header, fx.enc))
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, 1, fx.s.Requests("GET /collections/file"))
	assert.Equal(t, fx.header, fx.file.ThumbnailHeader())
	assert.Empty(t, sleeps)
}

// A commit that failed (or whose answer was lost, with a re-read that does
// not show it) is not sent again in this run: a second commit could be an
// exact repeat, which wedges museum, or replace a thumbnail that landed.
func TestFailedCommitIsNotSentAgain(t *testing.T) {
	// 500 is also museum's "too large" answer: never retried with a fresh upload.
	for _, status := range []int{500, 503} {
		fx := setup(t)
		fx.s.Inject("PUT /files/thumbnail", enteapitest.Status(status))
		var sleeps []time.Duration
		err := Upload(context.Background(), fx.c, fastPolicy(&sleeps), fx.album.ID, fx.file.ID, fx.header, fx.enc)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not sent again")
		assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"), "%d", status)
		assert.Equal(t, 1, fx.s.Requests("GET /collections/file"), "re-read once to see whether it landed")
		assert.Equal(t, 1, fx.s.Requests("GET /files/upload-urls"))
		assert.Empty(t, sleeps)
		assert.NotEqual(t, fx.header, fx.file.ThumbnailHeader())
		assert.Zero(t, fx.s.ExactRepeats())
	}
}

// museum's rate limiter answers 429 before the commit runs: that one is
// waited out and the same commit sent again, with no new upload.
func TestRateLimitedCommitIsSentAgain(t *testing.T) {
	fx := setup(t)
	fx.s.Inject("PUT /files/thumbnail", enteapitest.RetryAfter(429, "3"))
	var sleeps []time.Duration
	require.NoError(t, Upload(context.Background(), fx.c, fastPolicy(&sleeps), fx.album.ID, fx.file.ID, fx.header, fx.enc))
	assert.Equal(t, 2, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, 1, fx.s.Requests("GET /files/upload-urls"))
	assert.Equal(t, []time.Duration{3 * time.Second}, sleeps)
	assert.Equal(t, fx.header, fx.file.ThumbnailHeader())
	assert.Zero(t, fx.s.ExactRepeats())
}

// A lost answer whose re-read is stale (the file still shows the old
// header) must not lead to a second commit.
func TestStaleReReadCausesNoSecondCommit(t *testing.T) {
	fx := setup(t)
	old := fx.file.ThumbnailHeader()
	fx.s.Inject("PUT /files/thumbnail", enteapitest.LoseResponse())
	fx.s.Inject("GET /collections/file", enteapitest.StaleThumbnailHeader(old))
	var sleeps []time.Duration
	err := Upload(context.Background(), fx.c, fastPolicy(&sleeps), fx.album.ID, fx.file.ID, fx.header, fx.enc)
	require.Error(t, err, "it cannot tell that it landed")
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.Equal(t, fx.header, fx.file.ThumbnailHeader(), "the one commit landed")
	assert.Zero(t, fx.s.ExactRepeats())
}

func TestPermanentCommitFailureStops(t *testing.T) {
	fx := setup(t)
	fx.s.Inject("PUT /files/thumbnail", enteapitest.Status(403))
	var sleeps []time.Duration
	err := Upload(context.Background(), fx.c, fastPolicy(&sleeps), fx.album.ID, fx.file.ID, fx.header, fx.enc)
	require.Error(t, err)
	assert.Equal(t, 1, fx.s.Requests("PUT /files/thumbnail"))
	assert.Zero(t, fx.s.Requests("GET /collections/file"))
}
