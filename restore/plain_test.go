//go:build unix

package restore

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
)

// A FIFO, a link to one and a link to a device in place of saved files
// each fail by name, at once, and the other files are restored: opening
// a FIFO waits for a writer that never comes, reading a device never
// ends.
func TestRestoreOpensOnlyPlainFiles(t *testing.T) {
	e := newEnv(t)
	trip := e.src.AddAlbum("Trip")
	for _, n := range []string{"fifo.jpg", "tofifo.jpg", "todev.jpg", "ok.jpg"} {
		trip.AddFile(enteapitest.FileSpec{Title: n, Data: enteapitest.FakeJPEG(n)})
	}
	e.backup(e.src, e.dir)
	dir := filepath.Join(e.dir, "Trip")
	fifo := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "fifo.jpg")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo.jpg"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "tofifo.jpg")))
	require.NoError(t, os.Symlink(fifo, filepath.Join(dir, "tofifo.jpg")))
	require.NoError(t, os.Remove(filepath.Join(dir, "todev.jpg")))
	require.NoError(t, os.Symlink("/dev/zero", filepath.Join(dir, "todev.jpg")))

	var sum *Summary
	var err error
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		sum, err = e.restoreWith(e.options())
	}()
	select {
	case <-ran:
	case <-awaitBound():
		t.Fatal("the restore waits on a FIFO")
	}
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Uploaded)
	require.Len(t, sum.Failures, 3)
	why := map[string]string{}
	for _, f := range sum.Failures {
		why[f.Title] = f.Error
	}
	assert.Contains(t, why["fifo.jpg"], "fifo.jpg is a FIFO, not a plain file")
	assert.Contains(t, why["tofifo.jpg"], "tofifo.jpg is a symbolic link, not a plain file")
	assert.Contains(t, why["todev.jpg"], "todev.jpg is a symbolic link, not a plain file")

	o := e.options()
	o.DryRun = true
	sum, err = e.restoreWith(o)
	require.NoError(t, err)
	assert.Len(t, sum.Failures, 3, "a dry run names them too, opening nothing")
	assert.Zero(t, sum.Uploaded, "the plain one is there")
}

func TestOpenPlainNamesWhatItRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, tc := range []struct{ path, what string }{
		{fifo, "a FIFO"},
		{dir, "a folder"},
		{"/dev/null", "a device"},
	} {
		_, _, err := openPlain(tc.path)
		var np *NotPlainError
		if assert.ErrorAs(t, err, &np, tc.path) {
			assert.Equal(t, tc.what, np.What)
		}
	}
	plain := filepath.Join(dir, "plain")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o600))
	f, fi, err := openPlain(plain)
	require.NoError(t, err)
	assert.EqualValues(t, 1, fi.Size())
	require.NoError(t, f.Close())
}

// A file that grows, shrinks or is written while it is read ends in a
// *ChangedError that names it and says how; one that holds still reads
// to its end.
func TestAPlainReaderTellsAFileThatChangesAsItIsRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(path string)
		why    string
	}{
		{"grows", func(p string) { appendTo(t, p, "more") }, "(it grew)"},
		{"shrinks", func(p string) { require.NoError(t, os.Truncate(p, 2)) }, "(it shrank)"},
		{"written", func(p string) {
			require.NoError(t, os.WriteFile(p, []byte("ABCDEFGH"), 0o600))
			require.NoError(t, os.Chtimes(p, past.Add(1), past.Add(1)))
		}, "(it was written)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "beach.jpg")
			require.NoError(t, os.WriteFile(path, []byte("abcdefgh"), 0o600))
			require.NoError(t, os.Chtimes(path, past, past))
			r, done, err := readPlain(context.Background(), path, nil)
			require.NoError(t, err)
			defer done()
			b := make([]byte, 4)
			_, err = r.Read(b)
			require.NoError(t, err)
			tc.change(path)
			_, err = readAll(r)
			var ce *ChangedError
			require.ErrorAs(t, err, &ce)
			assert.ErrorIs(t, err, ErrChanged)
			assert.Contains(t, err.Error(), "beach.jpg changed while quak read it "+tc.why)
		})
	}
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }

// A source that is not what its journal record says (another size or
// time) is refused before a byte of it is read.
func TestReadPlainRefusesASourceNotAsRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "beach.jpg")
	require.NoError(t, os.WriteFile(path, []byte("abcdefgh"), 0o600))
	require.NoError(t, os.Chtimes(path, past, past))
	same := folder.SourceStat{Size: 8, MTime: past.UnixNano()}
	r, done, err := readPlain(context.Background(), path, &same)
	require.NoError(t, err)
	done()
	assert.Equal(t, same, r.was)
	for _, other := range []folder.SourceStat{{Size: 7, MTime: past.UnixNano()}, {Size: 8, MTime: past.UnixNano() + 1}} {
		_, _, err := readPlain(context.Background(), path, &other)
		assert.ErrorContains(t, err, "beach.jpg changed since it was encrypted for its upload")
		assert.ErrorIs(t, err, ErrChanged)
	}
}

// measure stops reading when the run is stopped, between two reads of a
// large file, and says why.
func TestMeasureStopsWithTheRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.mov")
	require.NoError(t, os.WriteFile(path, make([]byte, 8<<20), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reads := 0
	r := &run{encrypt: func(key, header []byte, src io.Reader) (*secretstream.EncryptReader, error) {
		return secretstream.NewEncryptReader(key, header, readerFunc(func(p []byte) (int, error) {
			reads++
			if reads == 1 {
				cancel()
			}
			return src.Read(p)
		}))
	}}
	_, _, err := r.measure(ctx, path, make([]byte, 32), make([]byte, 24), "")
	assert.ErrorIs(t, err, context.Canceled)
	assert.LessOrEqual(t, reads, 2, "no read after the one that saw the run stopped")
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
