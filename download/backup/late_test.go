package backup

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/quak-photos/quak/apiclient/enteapitest"
)

// A file museum committed late (stamped when its upload arrived, visible
// only after later files were committed, with the album's time set back
// to its stamp) appears below the cursor of a run that already listed
// the album. The next run lists again from a distance behind its cursor
// and saves it, doing nothing twice for what it had already seen.
func TestALateCommitIsNotMissed(t *testing.T) {
	for _, c := range []struct {
		name  string
		after func(a *enteapitest.Album) // once the late file is visible
	}{
		{"the album's time went back", func(*enteapitest.Album) {}},
		{"then something else changed", func(a *enteapitest.Album) {
			a.AddFile(enteapitest.FileSpec{Title: "after.jpg", Size: 30, Seed: 9})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			a := e.u.AddAlbum("Phone")
			gone := a.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Size: 10, Seed: 1})
			late, commit := a.AddFileLate(enteapitest.FileSpec{Title: "late.jpg", Size: 20, Seed: 2})
			for i := 0; i < 4; i++ { // more than a page, committed after late.jpg's stamp
				a.AddFile(enteapitest.FileSpec{Title: string(rune('a'+i)) + ".jpg", Size: 10, Seed: byte(3 + i)})
			}
			a.AddFile(enteapitest.FileSpec{Title: "lost.jpg", Size: 10, LostFile: true})
			first := e.mustRun()
			assert.Equal(t, 5, first.New)
			gone.Trash()
			second := e.mustRun()
			assert.Equal(t, 1, second.DeletedOnServer)
			assert.Equal(t, 1, second.Failed)

			commit()
			c.after(a)
			downloads := e.downloads()
			sum := e.mustRun()
			e.same("Phone/late.jpg", late.Plaintext())
			want := 1
			if e.exists("Phone/after.jpg") {
				want = 2
			}
			assert.Equal(t, want, sum.New, "only what is new is saved")
			assert.Equal(t, want+1, e.downloads()-downloads, "nothing downloaded twice (the +1: lost.jpg's one try)")
			assert.Zero(t, sum.DeletedOnServer, "a deletion already seen is not reported again")
			assert.Zero(t, sum.Updated)
			assert.Equal(t, 1, sum.Failed, "a failed file is retried once a run, not once more for being listed again")

			third := e.mustRun()
			assert.Zero(t, third.New+third.Updated+third.DeletedOnServer)
		})
	}
}
