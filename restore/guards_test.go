package restore

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
)

func TestRestoreStopsBeforeUploadingWhatTheTargetHasNoRoomFor(t *testing.T) {
	for name, limit := range map[string]func(u *enteapitest.User){
		"full":    func(u *enteapitest.User) { u.SetStorage(100 << 10) },
		"expired": func(u *enteapitest.User) { u.ExpirePlan() },
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.library()
			e.backup(e.src, e.dir)
			limit(e.dst)
			_, err := e.restoreWith(e.options())
			var qe *QuotaError
			require.ErrorAs(t, err, &qe)
			assert.Positive(t, qe.Need)
			assert.Equal(t, 0, e.s.Requests("POST /collections"), "nothing is made in the target")
			assert.Equal(t, 0, e.s.Requests("POST /files/upload-url"))
		})
	}
}

func TestRestoreStopsAtTheServersQuotaRefusal(t *testing.T) {
	for _, status := range []int{402, 426} {
		e := newEnv(t)
		e.library()
		e.backup(e.src, e.dir)
		e.s.Inject("POST /files/upload-url", enteapitest.Status(status))
		_, err := e.restoreWith(e.options())
		var qe *QuotaError
		require.ErrorAs(t, err, &qe, "%d", status)
		assert.Equal(t, 1, e.s.Requests("POST /files/upload-url"), "the run stops at the first refusal")
	}
}

func TestRestoreRefusesToUploadCiphertextThatDoesNotOpen(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	wrong := make([]byte, 32)
	o.encrypt = func(_, header []byte, src io.Reader) (*secretstream.EncryptReader, error) {
		return secretstream.NewEncryptReader(wrong, header, src)
	}
	sum, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Equal(t, 6, sum.Failed)
	assert.Contains(t, sum.Failures[0].Error, "does not open as sent")
	assert.Equal(t, 0, e.s.Requests("POST /files/upload-url"), "nothing of it is sent")
	assert.Equal(t, 0, e.s.Requests("POST /files"))
}

func TestRestoreIntoTheSourceBringsBackOnlyWhatWasDeleted(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	trip.AddFile(enteapitest.FileSpec{Title: "kept.jpg", Data: enteapitest.FakeJPEG("kept")})
	gone := trip.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Data: enteapitest.FakeJPEG("gone")})
	e.backup(e.src, e.dir)
	gone.Trash()
	e.dst = e.src
	sum := e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, 1, sum.Present)
	assert.Equal(t, 0, sum.AlbumsCreated, "its album is found by name")
}

func TestRestoreKeepsUploadURLsWithinMuseumsLimitAMinute(t *testing.T) {
	e := newEnv(t)
	e.library()
	e.backup(e.src, e.dir)
	o := e.options()
	o.URLsPerMinute = 4
	now := time.Unix(1_700_000_000, 0)
	o.Now = func() time.Time { return now }
	_, err := e.restoreWith(o)
	require.NoError(t, err)
	assert.Contains(t, e.sleeps, time.Minute, "the fifth URL waits for the first to be a minute old")
	e.sameAsSource()
}

func TestWindowWaitsOnlyWhenAMinuteIsFull(t *testing.T) {
	now := time.Unix(0, 0)
	var slept []time.Duration
	w := newWindow(2, func() time.Time { return now }, func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		now = now.Add(d)
		return nil
	})
	ctx := context.Background()
	require.NoError(t, w.wait(ctx, "a"))
	now = now.Add(10 * time.Second)
	require.NoError(t, w.wait(ctx, "a"))
	require.NoError(t, w.wait(ctx, "b"), "each route has its own limit")
	assert.Empty(t, slept)
	require.NoError(t, w.wait(ctx, "a"))
	assert.Equal(t, []time.Duration{50 * time.Second}, slept)
	now = now.Add(2 * time.Minute)
	require.NoError(t, w.wait(ctx, "a"))
	assert.Len(t, slept, 1, "an old minute holds nothing back")

	stop := errors.New("stopped")
	w.sleep = func(context.Context, time.Duration) error { return stop }
	require.NoError(t, w.wait(ctx, "a"))
	assert.ErrorIs(t, w.wait(ctx, "a"), stop)
}
