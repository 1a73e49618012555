package backup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/folder"
)

// tempWatch sees every name created or moved into the folders it watches
// (inotify): a temp file that lived only for a moment is seen too.
type tempWatch struct {
	t     *testing.T
	fd    int
	root  string
	dirs  map[int32]string
	temps []string
}

func newTempWatch(t *testing.T) *tempWatch {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Close(fd) })
	return &tempWatch{t: t, fd: fd, dirs: map[int32]string{}}
}

// watch adds every folder under root but quak's own (DIR/.quak).
func (w *tempWatch) watch(root string) {
	w.t.Helper()
	w.root = root
	require.NoError(w.t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == folder.StateDir {
			return filepath.SkipDir
		}
		wd, err := syscall.InotifyAddWatch(w.fd, p, syscall.IN_CREATE|syscall.IN_MOVED_TO)
		if err != nil {
			return err
		}
		w.dirs[int32(wd)] = p
		return nil
	}))
}

// drain reads the events so far (never waiting) and keeps the temp names,
// but for the probe by which each run checks that DIR itself is writable
// (prepareDir), empty and removed at once.
func (w *tempWatch) drain() {
	w.t.Helper()
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if errors.Is(err, syscall.EAGAIN) {
			return
		}
		require.NoError(w.t, err)
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			require.Zero(w.t, ev.Mask&syscall.IN_Q_OVERFLOW, "inotify lost events")
			name := string(buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)])
			name = strings.TrimRight(name, "\x00")
			dir := w.dirs[ev.Wd]
			probe := dir == w.root && strings.HasPrefix(name, durable.TempPrefix+"probe-")
			if strings.HasPrefix(name, durable.TempPrefix) && !probe {
				w.temps = append(w.temps, filepath.Join(dir, name))
			}
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// With --xmp, --sidecars takeout and --date-view, every file quak writes
// (sidecars, metadata.json, date-view links and copies, files moved back
// from the trash) is made in DIR/.quak/tmp and renamed into place: no
// temp file ever appears, even for a moment, in an album folder or in the
// date view, where photo managers would see it.
func TestNoTempFileEverInAnAlbumFolderWithViews(t *testing.T) {
	e := newEnv(t)
	trips, family := e.u.AddAlbum("Trips"), e.u.AddAlbum("Family")
	x := trips.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 100, Seed: 1, CreationTime: june, Caption: "before"})
	trips.AddFile(enteapitest.FileSpec{Title: "live.heic", FileType: 2, CreationTime: june,
		Data: enteapitest.LivePhoto("heic", []byte("still"), "mov", []byte("moving"))})
	y := family.AddFile(enteapitest.FileSpec{Title: "y.jpg", Size: 100, Seed: 2, CreationTime: june})
	e.mustRun()
	w := newTempWatch(t)
	step := func(name string, do func()) {
		t.Helper()
		w.watch(e.dir)
		do()
		w.drain()
		assert.Empty(t, w.temps, "%s: temp files in album folders or the date view", name)
		w.temps = nil
	}

	step("converting to the new options", func() {
		e.views = allViews()
		e.mustRun()
	})
	require.True(t, e.sameInode("By date/2024/06/x.jpg", "Trips/x.jpg"))
	step("edits on the server", func() {
		x.Edit(func(s *enteapitest.FileSpec) { s.Caption, s.EditedName = "after", "renamed.jpg" })
		e.mustRun()
	})
	require.Contains(t, string(e.read("Trips/renamed.jpg.xmp")), "after")
	step("copies where links are refused", func() {
		hardLink = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EPERM} }
		defer func() { hardLink = os.Link }()
		y.Reupload([]byte("new bytes"))
		e.mustRun()
	})
	e.same("By date/2024/06/y.jpg", []byte("new bytes"))
	step("prune", func() {
		e.s.Advance(24 * time.Hour)
		trips.Remove(x)
		sum, err := e.prune(100)
		require.NoError(t, err)
		require.Equal(t, 1, sum.Pruned)
	})
	step("back from the trash", func() {
		e.s.Advance(24 * time.Hour)
		trips.Add(x)
		sum := e.mustRun()
		require.Equal(t, 1, sum.Restored)
	})
	require.True(t, e.exists("Trips/renamed.jpg.xmp"))
	step("a full look with --metadata-only", func() {
		require.NoError(t, os.Remove(filepath.Join(e.dir, "Trips", "renamed.jpg.xmp")))
		e.metadataOnly()
	})
	require.True(t, e.exists("Trips/renamed.jpg.xmp"))
	e.noTemps()

	// The watch sees a temp file that lives for a moment.
	probe := filepath.Join(e.dir, "Trips", durable.TempPrefix+"probe")
	require.NoError(t, os.WriteFile(probe, nil, 0o600))
	require.NoError(t, os.Remove(probe))
	w.drain()
	assert.Equal(t, []string{probe}, w.temps)
}
