package backup

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/filter"
)

// An album shared with the account, saved, unshared (a tombstone), pruned
// and shared again (the same collection id) comes back whole: its files
// are moved back from the trash, with no download.
func TestAReSharedAlbumComesBackWhole(t *testing.T) {
	for _, emptied := range []bool{false, true} {
		t.Run(fmt.Sprintf("trash emptied=%v", emptied), func(t *testing.T) {
			e := newEnv(t)
			bob := e.s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
			trip := bob.AddAlbum("Trip")
			a := trip.AddFile(enteapitest.FileSpec{Title: "a.jpg", Size: 100, Seed: 1})
			e.s.Advance(24 * time.Hour) // a.jpg is far behind the album's cursor
			trip.AddFile(enteapitest.FileSpec{Title: "b.heic", FileType: 2,
				Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("moving"))})
			trip.ShareWith(e.u, "VIEWER")
			e.mustRun()
			e.s.Advance(24 * time.Hour) // far beyond the listing's overlap
			trip.Unshare(e.u)
			sum, err := e.prune(100)
			require.NoError(t, err)
			require.Empty(t, sum.PruneRefused)
			assert.False(t, e.exists("Trip/a.jpg"))
			assert.True(t, e.exists(trashToday+"/Trip/a.jpg"))
			if emptied {
				_, err := EmptyTrash(e.dir, pruneDay.AddDate(0, 1, 0), false)
				require.NoError(t, err)
			}

			trip.ShareWith(e.u, "VIEWER")
			downloads := e.downloads()
			sum = e.mustRun()
			e.same("Trip/a.jpg", a.Plaintext())
			assert.Equal(t, []byte("still"), e.read("Trip/b.heic"))
			assert.Equal(t, []byte("moving"), e.read("Trip/b.mov"))
			assert.True(t, e.exists("Trip/.meta/a.jpg.json") && e.exists("Trip/.meta/b.heic.json"))
			if emptied {
				assert.Equal(t, 2, sum.New, "downloaded again")
			} else {
				assert.Equal(t, 2, sum.Restored)
				assert.Equal(t, downloads, e.downloads(), "moved back from the trash, not downloaded")
				assert.False(t, e.exists(trashToday+"/Trip/a.jpg"), "moved, not copied")
				assert.False(t, e.exists(trashToday+"/Trip/.meta/a.jpg.json"), "its old sidecar does not linger in the trash")
			}
			assert.Equal(t, 2, sum.TotalFiles)
			again := e.mustRun()
			assert.Zero(t, again.New+again.Restored+again.Updated)
			assert.Equal(t, 2, again.Unchanged)
			e.noTemps()
		})
	}

}

// A file removed from an album and pruned comes back from the trash when
// it is put back in the album.
func TestAFileThatReappearsIsMovedBackFromTheTrash(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	e.mustRun()
	e.s.Advance(24 * time.Hour)
	a.Remove(f)
	_, err := e.prune(100)
	require.NoError(t, err)
	require.False(t, e.exists("A/x.jpg"))
	e.s.Advance(24 * time.Hour)
	a.Add(f)
	downloads := e.downloads()
	sum := e.mustRun()
	assert.Equal(t, 1, sum.Restored)
	assert.Equal(t, downloads, e.downloads())
	e.same("A/x.jpg", f.Plaintext())
	assert.Len(t, e.kinds(FileRestored), 1)
}

// A trash copy whose bytes changed is not moved back: the file is
// downloaded again.
func TestADamagedTrashCopyIsNotMovedBack(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1})
	e.mustRun()
	a.Remove(f)
	_, err := e.prune(100)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, trashToday, "A", "x.jpg"), []byte("changed"), 0o644))
	a.Add(f)
	sum := e.mustRun()
	assert.Equal(t, 1, sum.New)
	e.same("A/x.jpg", f.Plaintext())
}

// A 404 on an album's listing refuses pruning in that run; a later run in
// which the album is merely absent from the listing (its sharer deleted
// the account: no tombstone) moves nothing.
func TestAnAbsentAlbumIsNeverPruned(t *testing.T) {
	e := newEnv(t)
	bob := e.s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	theirs := bob.AddAlbum("Theirs")
	theirs.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	theirs.ShareWith(e.u, "VIEWER")
	e.u.AddAlbum("Mine").AddFile(enteapitest.FileSpec{Title: "m.jpg", Size: 10, Seed: 2})
	e.mustRun()
	theirs.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 3}) // it changed: listed again
	e.s.Inject("GET /collections/v2/diff", enteapitest.Repeat(enteapitest.Status(404), 4)...)
	sum, err := e.prune(100)
	require.NoError(t, err)
	require.NotEmpty(t, sum.PruneRefused)
	bob.DeleteAccount()
	for i := 0; i < 2; i++ {
		sum, err = e.prune(100)
		require.NoError(t, err)
		assert.Zero(t, sum.Pruned)
		assert.True(t, e.exists("Theirs/x.jpg"), "moved on a mark an earlier, refused run left")
	}
}

// A listing that wrongly marks live files deleted is refused by
// --max-delete, with what would have moved; the marks are not trusted by
// a later run with a higher --max-delete, which proves each deletion first.
func TestMarksOfARefusedPruneAreNeverTrusted(t *testing.T) {
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	var files []*enteapitest.File
	for i := 0; i < 6; i++ {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i)}))
	}
	e.mustRun()
	a.AddFile(enteapitest.FileSpec{Title: "bump.jpg", Size: 10, Seed: 9}) // the album changed: listed again
	var lies []string
	for _, f := range files[:5] {
		lies = append(lies, fmt.Sprintf(`{"id":%d,"collectionID":%d,"ownerID":%d,"isDeleted":true,"updationTime":%d}`,
			f.ID, a.ID, e.u.ID, 1_700_000_000_000_000+10_000))
	}
	e.s.Inject("GET /collections/v2/diff", enteapitest.StatusBody(200, `{"diff":[`+strings.Join(lies, ",")+`],"hasMore":false}`))
	sum, err := e.prune(3)
	require.NoError(t, err)
	assert.Contains(t, sum.PruneRefused, "more than --max-delete 3")
	would := e.kinds(WouldPrune)
	require.Len(t, would, 5, "a refusal lists what would move")
	assert.Equal(t, filepath.Join("A", "0.jpg"), would[0].Path)

	e.mustRun()
	e.mustRun()
	sum, err = e.prune(10)
	require.NoError(t, err)
	assert.Zero(t, sum.Pruned, "live files moved on marks of a refused run")
	for i := 0; i < 6; i++ {
		assert.True(t, e.exists(fmt.Sprintf("A/%d.jpg", i)))
	}
	kept := e.kinds(PruneKept)
	require.Len(t, kept, 5, "each mark the server contradicts is named")
	assert.Contains(t, kept[0].Err.Error(), "marked it deleted wrongly")
	sum, err = e.prune(10)
	require.NoError(t, err)
	assert.Zero(t, sum.Pruned)
	assert.Empty(t, e.kinds(PruneKept), "the contradicted marks were cleared")
	files[0].Trash() // a real deletion is still pruned
	sum, err = e.prune(10)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned)
	assert.False(t, e.exists("A/0.jpg"))
}

// A deleted album's files count one each against --max-delete; only the
// files quak saved move (with their sidecars), and the user's own files in
// its folder stay where they are.
func TestADeletedAlbumMovesOnlyWhatQuakSaved(t *testing.T) {
	e := newEnv(t)
	gone := e.u.AddAlbum("Gone")
	for i := 0; i < 3; i++ {
		gone.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("%d.jpg", i), Size: 10, Seed: byte(i)})
	}
	e.mustRun()
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "Gone", "notes.txt"), []byte("mine"), 0o644))
	gone.Delete()
	sum, err := e.prune(2)
	require.NoError(t, err)
	assert.Contains(t, sum.PruneRefused, "3 album entries")
	assert.True(t, e.exists("Gone/0.jpg"))

	sum, err = e.prune(3)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Pruned)
	for i := 0; i < 3; i++ {
		assert.False(t, e.exists(fmt.Sprintf("Gone/%d.jpg", i)))
		assert.True(t, e.exists(fmt.Sprintf("%s/Gone/%d.jpg", trashToday, i)))
		assert.True(t, e.exists(fmt.Sprintf("%s/Gone/.meta/%d.jpg.json", trashToday, i)))
	}
	e.same("Gone/notes.txt", []byte("mine"))
	assert.Len(t, e.kinds(AlbumPruned), 1)

	// The user moves it all back from the trash: a folder recreated at its
	// old name is the user's now, and later runs never move it again.
	require.NoError(t, os.MkdirAll(filepath.Join(e.dir, "Gone", ".meta"), 0o755))
	for _, name := range []string{"0.jpg", "1.jpg", "2.jpg", ".meta/album_meta.json"} {
		require.NoError(t, os.Rename(filepath.Join(e.dir, trashToday, "Gone", name), filepath.Join(e.dir, "Gone", name)))
	}
	for i := 0; i < 2; i++ {
		sum, err = e.prune(100)
		require.NoError(t, err)
		assert.Zero(t, sum.Pruned)
		assert.Empty(t, e.kinds(AlbumPruned))
		for _, name := range []string{"notes.txt", "0.jpg", ".meta/album_meta.json"} {
			assert.True(t, e.exists("Gone/"+name), "%s moved again", name)
		}
	}
}

// Two files of the same path trashed on the same day both stay in the
// trash, on file systems with hard links or without.
func TestTheTrashNeverOverwrites(t *testing.T) {
	t.Run("links", testTheTrashNeverOverwrites)
	t.Run("no links", func(t *testing.T) {
		refuseLinks(t)
		testTheTrashNeverOverwrites(t)
	})
}

func testTheTrashNeverOverwrites(t *testing.T) {
	t.Helper()
	e := newEnv(t)
	a := e.u.AddAlbum("A")
	first := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	e.mustRun()
	first.Trash()
	_, err := e.prune(100)
	require.NoError(t, err)
	second := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 20, Seed: 2})
	e.mustRun()
	e.same("A/x.jpg", second.Plaintext())
	second.Trash()
	sum, err := e.prune(100)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned)
	e.same(trashToday+"/A/x.jpg", first.Plaintext())
	e.same(trashToday+"/A/x (2).jpg", second.Plaintext())
	assert.True(t, e.exists(trashToday+"/A/.meta/x.jpg.json") && e.exists(trashToday+"/A/.meta/x.jpg (2).json"))
}

// Pruning needs a run that listed everything and ended well: not after a
// Ctrl-C or a fatal error, not with album filters.
func TestPruneOnlyAfterACompleteRun(t *testing.T) {
	setup := func(t *testing.T) (*env, *enteapitest.File) {
		t.Helper()
		e := newEnv(t)
		a := e.u.AddAlbum("A")
		f := a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
		e.u.AddAlbum("B").AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 10, Seed: 2})
		e.mustRun()
		f.Trash()
		return e, f
	}
	t.Run("interrupted", func(t *testing.T) {
		e, _ := setup(t)
		big := e.u.AddAlbum("C").AddFile(enteapitest.FileSpec{Title: "big.mp4", Size: 1 << 20})
		e.s.Inject(fmt.Sprintf("GET /store/%d/file-%d", e.u.ID, big.ID), enteapitest.StallAfter(1000))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-e.s.Stalled
			cancel()
		}()
		o := e.options()
		o.Prune, o.Now = true, func() time.Time { return pruneDay }
		_, err := Run(ctx, o)
		require.ErrorIs(t, err, context.Canceled)
		assert.True(t, e.exists("A/x.jpg"))
	})
	t.Run("fatal", func(t *testing.T) {
		e, _ := setup(t)
		e.u.AddAlbum("C").AddFile(enteapitest.FileSpec{Title: "z.jpg", Size: 10})
		e.s.Inject("GET /collections/v2/diff", enteapitest.StatusBody(401, `{"error":"invalid token"}`))
		_, err := e.prune(100)
		require.Error(t, err)
		assert.True(t, e.exists("A/x.jpg"))
	})
	for name, f := range map[string]filter.Set{
		"--albums":         {Albums: filter.Albums{Include: []string{"A"}}},
		"--exclude-albums": {Albums: filter.Albums{Exclude: []string{"B"}}},
		"--no-shared":      {NoShared: true},
		"--no-hidden":      {NoHidden: true},
		"--no-archived":    {NoArchived: true},
	} {
		t.Run(name, func(t *testing.T) {
			e, _ := setup(t)
			o := e.options()
			o.Prune, o.Now, o.Filter = true, func() time.Time { return pruneDay }, f
			sum, err := Run(context.Background(), o)
			require.NoError(t, err)
			assert.Contains(t, sum.PruneRefused, "album filters")
			assert.True(t, e.exists("A/x.jpg"))
		})
	}
}

// Every deleted album of a run is pruned, each with its own event, in a
// stable order (file id, then album id): the same run says the same lines.
func TestSeveralDeletedAlbumsArePruned(t *testing.T) {
	e := newEnv(t)
	one, two := e.u.AddAlbum("One"), e.u.AddAlbum("Two")
	first := one.AddFile(enteapitest.FileSpec{Title: "1.jpg", Size: 10, Seed: 1})
	two.Add(first)
	second := two.AddFile(enteapitest.FileSpec{Title: "2.jpg", Size: 10, Seed: 2})
	e.mustRun()
	one.Delete()
	two.Delete()
	sum, err := e.prune(100)
	require.NoError(t, err)
	assert.Equal(t, 3, sum.Pruned)
	var moved []string
	for _, ev := range e.kinds(FilePruned) {
		moved = append(moved, fmt.Sprintf("%d in %d", ev.FileID, ev.CollectionID))
	}
	assert.Equal(t, []string{fmt.Sprintf("%d in %d", first.ID, one.ID), fmt.Sprintf("%d in %d", first.ID, two.ID),
		fmt.Sprintf("%d in %d", second.ID, two.ID)}, moved)
	albums := e.kinds(AlbumPruned)
	require.Len(t, albums, 2)
	assert.Equal(t, []int64{one.ID, two.ID}, []int64{albums[0].CollectionID, albums[1].CollectionID})
	assert.False(t, e.exists("One") || e.exists("Two"), "both folders, empty, are gone")
	assert.True(t, e.exists(trashToday+"/One/.meta/album_meta.json") && e.exists(trashToday+"/Two/.meta/album_meta.json"))
}

// A collaborator's file taken out of the account's own album is pruned by
// the run whose listing shows it gone: museum refuses to say anything
// more about it (403), so that listing is the proof.
func TestACollaboratorsFileDeletedThisRunIsPruned(t *testing.T) {
	e := newEnv(t)
	bob := e.s.AddUser("bob@example.org", "b", enteapitest.UserOptions{})
	mine := e.u.AddAlbum("Mine")
	mine.ShareWith(bob, "COLLABORATOR")
	theirs := mine.AddFileBy(bob, enteapitest.FileSpec{Title: "bobs.jpg", Size: 10, Seed: 1})
	e.mustRun()
	e.s.Advance(24 * time.Hour)
	mine.Remove(theirs)
	sum, err := e.prune(100)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Pruned)
	assert.False(t, e.exists("Mine/bobs.jpg"))
	assert.Zero(t, e.s.Requests("GET /collections/file"), "the listing was proof enough")
}
