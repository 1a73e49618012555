package restore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// bigLibrary is one video large enough to go in two parts.
func (e *env) bigLibrary() {
	e.src.AddAlbum("Big").AddFile(enteapitest.FileSpec{Title: "long.mp4", FileType: 1, Size: 22 << 20, Seed: 7})
}

func TestRestoreSendsALargeFileInPartsAndResumesByPart(t *testing.T) {
	e := newEnv(t)
	e.bigLibrary()
	e.backup(e.src, e.dir)
	// The second part refused until the file fails: the next run sends
	// only that part.
	e.s.InjectUpload(enteapitest.StepPart, enteapitest.Pass(), enteapitest.Status(500), enteapitest.Status(500),
		enteapitest.Status(500), enteapitest.Status(500))
	sum, err := e.restoreWith(e.options())
	require.NoError(t, err)
	require.Equal(t, 1, sum.Failed)
	require.Equal(t, 1, e.s.Requests("POST /files/multipart-upload-url"))

	sum = e.mustRestore()
	assert.Equal(t, 1, sum.Uploaded)
	assert.Less(t, sum.Bytes, int64(3<<20), "the first part is not sent again")
	assert.Equal(t, 1, e.s.Requests("POST /files/multipart-upload-url"), "minted once")
	e.sameAsSource()
}

func TestRestoreGoesOnAfterALostCompletion(t *testing.T) {
	for name, c := range map[string]struct {
		f       enteapitest.Fault
		commits int
	}{"applied": {enteapitest.LoseResponse(), 1}, "not applied": {enteapitest.Drop(), 2}} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.bigLibrary()
			e.backup(e.src, e.dir)
			e.s.InjectUpload(enteapitest.StepComplete, c.f)
			sum := e.mustRestore()
			assert.Equal(t, 1, sum.Uploaded)
			assert.Equal(t, c.commits, e.s.Requests("POST /files"), "a commit refused for want of its object is not retried as is")
			assert.Equal(t, c.commits, e.s.Requests("POST /files/multipart-upload-url"), "started again once, under a new key")
			e.sameAsSource()
		})
	}
}
