package backup

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// Issue 31: a file that failed (502s, a flipped bit) and was edited on the
// server before the next run is saved under its own name with its new
// content: the retry of its stale entry fails, but the new version the
// listing brings takes the name, and the stale failure is forgotten.
func TestAFailedFileEditedSinceTakesItsNameAndTheRunSucceeds(t *testing.T) {
	for name, fault := range map[string]enteapitest.Fault{
		"502s":        enteapitest.Status(502),
		"flipped bit": enteapitest.FlipAt(20),
	} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			f := e.u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 3000, Seed: 1})
			e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID), enteapitest.Repeat(fault, 20)...)
			sum := e.mustRun()
			require.Equal(t, 1, sum.Failed)
			e.s.ClearFaults(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, f.ID)) // the fault is over
			edited := bytes.Repeat([]byte("new version "), 300)
			f.Reupload(edited)

			sum = e.mustRun()
			assert.Zero(t, sum.Failed, "the stale failure is forgotten: %v", sum.Failures)
			assert.Empty(t, sum.Failures)
			assert.Empty(t, sum.Reasons)
			assert.Equal(t, 1, sum.New)
			e.same("Videos/long.mp4", edited)
			assert.False(t, e.exists("Videos/long_1.mp4"), "no second name")
			assert.Zero(t, e.mustRun().Failed)
		})
	}
}
