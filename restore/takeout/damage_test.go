package takeout

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goodPart is a part whose photo and JSON are whole.
func goodPart() []tfile {
	return []tfile{f(gp+"Photos from 2020/good.jpg", jpeg(40)), f(gp+"Photos from 2020/good.jpg.json", photoJSON("good.jpg", t2020, nil))}
}

// damagedPart is a part with three photos of their own.
func damagedPart() []tfile {
	return []tfile{
		f(gp+"Photos from 2021/d1.jpg", append(jpeg(41), noise(300<<10, 41)...)), f(gp+"Photos from 2021/d1.jpg.json", photoJSON("d1.jpg", t2021, nil)),
		f(gp+"Photos from 2021/d2.jpg", append(jpeg(42), noise(300<<10, 42)...)), f(gp+"Photos from 2021/d2.jpg.json", photoJSON("d2.jpg", t2021, nil)),
		f(gp+"Photos from 2021/d3.jpg", append(jpeg(43), noise(300<<10, 43)...)), f(gp+"Photos from 2021/d3.jpg.json", photoJSON("d3.jpg", t2021, nil)),
	}
}

func cut(t *testing.T, path string, keep float64) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b[:int(float64(len(b))*keep)], 0o644))
}

func titles(a *account) []string {
	var out []string
	for _, f := range a.files() {
		out = append(out, f.meta.Title)
	}
	return sortedStrings(out)
}

// A zip cut short has no directory: it is named, nothing of it is read,
// and the other parts import.
func TestATruncatedZipIsNamedAndTheRestImports(t *testing.T) {
	a := newAccount(t)
	paths := writeParts(t, t.TempDir(), [][]tfile{goodPart(), damagedPart()}, "zip")
	cut(t, paths[1], 0.6)
	tk := openTakeout(t, paths, Options{})
	assert.Contains(t, tk.Report.Parts[1].Damaged, "download this part again")
	assert.Empty(t, tk.Report.Parts[0].Damaged)
	sum, err := restoreImport(a, tk)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Uploaded)
	assert.Equal(t, []string{"good.jpg"}, titles(a))
}

// A tgz cut short keeps the files read whole before the cut: they import,
// and the part is named.
func TestATruncatedTgzImportsWhatCameBeforeTheCut(t *testing.T) {
	a := newAccount(t)
	paths := writeParts(t, t.TempDir(), [][]tfile{goodPart(), damagedPart()}, "tgz")
	cut(t, paths[1], 0.6)
	tk := openTakeout(t, paths, Options{})
	assert.Contains(t, tk.Report.Parts[1].Damaged, "damaged after")
	sum, err := restoreImport(a, tk)
	require.NoError(t, err)
	assert.Empty(t, sum.Failures)
	got := titles(a)
	assert.Contains(t, got, "good.jpg")
	assert.Contains(t, got, "d1.jpg", "before the cut")
	assert.NotContains(t, got, "d3.jpg", "after the cut")
}

// A tgz whose gzip checksum fails has a damaged byte somewhere: none of it
// is trusted.
func TestATgzWhoseChecksumFailsIsLeftOut(t *testing.T) {
	a := newAccount(t)
	paths := writeParts(t, t.TempDir(), [][]tfile{goodPart(), damagedPart()}, "tgz")
	b, err := os.ReadFile(paths[1])
	require.NoError(t, err)
	b[len(b)-6] ^= 0xff // the trailer's CRC-32
	require.NoError(t, os.WriteFile(paths[1], b, 0o644))
	tk := openTakeout(t, paths, Options{})
	assert.Contains(t, tk.Report.Parts[1].Damaged, "checksum does not match")
	_, err = restoreImport(a, tk)
	require.NoError(t, err)
	assert.Equal(t, []string{"good.jpg"}, titles(a))
}

// A zip entry whose bytes do not match its CRC-32 fails by name; the same
// photo in another part is read from there instead.
func TestADamagedZipEntryFailsByNameOrIsReadFromAnotherCopy(t *testing.T) {
	for _, copied := range []bool{false, true} {
		t.Run(map[bool]string{false: "alone", true: "copied"}[copied], func(t *testing.T) {
			a := newAccount(t)
			parts := [][]tfile{goodPart(), damagedPart()}
			if copied {
				parts[0] = append(parts[0], f(gp+"Holiday/d2.jpg", parts[1][2].Data), f(gp+"Holiday/d2.jpg.json", photoJSON("d2.jpg", t2021, nil)),
					f(gp+"Holiday/metadata.json", albumJSON("Holiday")))
			}
			paths := writeParts(t, t.TempDir(), parts, "zip")
			flipInEntry(t, paths[1], gp+"Photos from 2021/d2.jpg")
			tk := openTakeout(t, paths, Options{})
			sum, err := restoreImport(a, tk)
			require.NoError(t, err)
			if copied {
				assert.Empty(t, sum.Failures)
				assert.Equal(t, []string{"d1.jpg", "d2.jpg", "d3.jpg", "good.jpg"}, titles(a))
				return
			}
			require.Len(t, sum.Failures, 1)
			assert.Contains(t, sum.Failures[0].Where, "d2.jpg")
			assert.True(t, strings.Contains(sum.Failures[0].Error, "checksum") || strings.Contains(sum.Failures[0].Error, "flate"), sum.Failures[0].Error)
			assert.Equal(t, []string{"d1.jpg", "d3.jpg", "good.jpg"}, titles(a))
		})
	}
}

// flipInEntry damages a byte in the middle of a zip entry's data.
func flipInEntry(t *testing.T, path, name string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	require.NoError(t, err)
	var at int64 = -1
	for _, zf := range zr.File {
		if zf.Name == name {
			off, err := zf.DataOffset()
			require.NoError(t, err)
			at = off + int64(zf.CompressedSize64)/2
		}
	}
	require.NoError(t, zr.Close())
	require.GreaterOrEqual(t, at, int64(0))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	b[at] ^= 0x5a
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// A part left out shows: its photos' JSON have no photo, and the folder is
// named as looking incomplete.
func TestAMissingPartShowsAsFoldersThatLookIncomplete(t *testing.T) {
	files := append(goodPart(), f(gp+"Photos from 2020/gone.jpg.json", photoJSON("gone.jpg", t2020, nil)))
	paths := writeParts(t, t.TempDir(), [][]tfile{files}, "zip")
	tk := openTakeout(t, paths, Options{})
	assert.Contains(t, tk.Report.Notes, Note{Kind: NoteOrphanJSON, Part: paths[0], Name: gp + "Photos from 2020/gone.jpg.json",
		Reason: "its photo is in no part given"})
	assert.Contains(t, tk.Report.Notes, Note{Kind: NoteIncomplete, Name: "Photos from 2020",
		Reason: "1 metadata JSON without their photos: a part of the Takeout seems to be missing"})
}

// Names that leave the archive, links and special files are never taken,
// and named.
func TestHostileNamesAndLinksAreLeftOut(t *testing.T) {
	hostile := []tfile{
		f("../escape.jpg", jpeg(50)), f("/etc/abs.jpg", jpeg(51)), f("Takeout/../../up.jpg", jpeg(52)),
		f("C:\\Windows\\win.jpg", jpeg(53)),
	}
	for _, kind := range []string{"zip", "tgz"} {
		t.Run(kind, func(t *testing.T) {
			files := append(goodPart(), hostile...)
			if kind == "zip" { // a tar cannot hold it
				files = append(files, f(gp+"Photos from 2020/bad\x00name.jpg", jpeg(54)))
			}
			if kind == "tgz" {
				files = append(files, tfile{Name: gp + "Photos from 2020/link.jpg", Link: "/etc/passwd"})
			}
			paths := writeParts(t, t.TempDir(), [][]tfile{files}, kind)
			tk := openTakeout(t, paths, Options{})
			assert.Equal(t, 1, tk.Report.Originals)
			r := tk.Report.Parts[0]
			assert.Equal(t, map[string]int{"zip": 5, "tgz": 4}[kind], r.Skipped[SkipUnsafe], "%v", tk.Report.Notes)
			if kind == "tgz" {
				assert.Equal(t, 1, r.Skipped[SkipLink])
			}
		})
	}
	root := t.TempDir()
	writeDir(t, root, append(goodPart(), tfile{Name: gp + "Photos from 2020/link.jpg", Link: "/etc/passwd"},
		tfile{Name: gp + "Photos from 2020/dirlink", Link: "/etc"}))
	tk := openTakeout(t, []string{root}, Options{})
	assert.Equal(t, 1, tk.Report.Originals)
	assert.Equal(t, 2, tk.Report.Parts[0].Skipped[SkipLink])
}

// JSON too large to be Google's, nested deeper than any decoder should
// follow, or not Google's at all, is left out and named; the photo it
// would describe is dated from itself.
func TestHugeDeepAndForeignJSONIsLeftOut(t *testing.T) {
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	files := []tfile{
		f(gp+"Photos from 2020/a.jpg", jpeg(60)), f(gp+"Photos from 2020/a.jpg.json", append([]byte(`{"title":"a.jpg","x":"`), append(bytes.Repeat([]byte("x"), 5<<20), '"', '}')...)),
		f(gp+"Photos from 2020/b.jpg", jpeg(61)), f(gp+"Photos from 2020/b.jpg.json", []byte(`{"photoTakenTime": `+deep+`}`)),
		f(gp+"Photos from 2020/c.jpg", jpeg(62)), f(gp+"Photos from 2020/c.jpg.json", []byte(`[1, 2, 3]`)),
		f(gp+"Photos from 2020/d.jpg", jpeg(63)), f(gp+"Photos from 2020/d.jpg.json", []byte(`not json at all`)),
	}
	for _, kind := range []string{"zip", "tgz", "dir"} {
		t.Run(kind, func(t *testing.T) {
			paths := writeParts(t, t.TempDir(), [][]tfile{files}, kind)
			tk := openTakeout(t, paths, Options{})
			r := tk.Report.Parts[0]
			assert.Equal(t, 1, r.Skipped[SkipBigJSON])
			assert.Equal(t, 3, r.Skipped[SkipBadJSON])
			assert.Equal(t, 4, r.Unmatched)
			assert.Equal(t, 4, tk.Report.Originals)
		})
	}
}

func TestOpenRefusesWhatIsNoTakeoutPart(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(t.Context(), []string{dir + "/missing.zip"}, Options{})
	var pe *PartError
	require.True(t, errors.As(err, &pe))
	assert.Contains(t, err.Error(), "does not exist")
	writeDir(t, dir, []tfile{f("notes.txt", []byte("hello"))})
	_, err = Open(t.Context(), []string{dir + "/notes.txt"}, Options{})
	assert.ErrorIs(t, err, ErrNotTakeout)
}

// A tgz whose second reading breaks (the disk went away, the file was cut
// since the first) fails the photos it did not give, by name, and the part;
// the next run imports them.
func TestATgzBrokenInItsSecondPassFailsWhatItDidNotGive(t *testing.T) {
	a := newAccount(t)
	paths := writeParts(t, t.TempDir(), [][]tfile{goodPart(), damagedPart()}, "tgz")
	opens := 0
	cutSecond := func(name string) (partFile, error) {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		if name == paths[1] {
			if opens++; opens == 2 {
				fi, _ := f.Stat()
				return &cutFile{File: f, left: fi.Size() / 2}, nil
			}
		}
		return f, nil
	}
	tk := openTakeout(t, paths, Options{open: cutSecond})
	sum, err := restoreImport(a, tk)
	require.NoError(t, err)
	require.NotEmpty(t, sum.Failures)
	for _, f := range sum.Failures {
		assert.Contains(t, f.Where, paths[1])
	}
	assert.Contains(t, tk.Report.Parts[1].Damaged, "damaged in its second reading")
	got := titles(a)
	assert.Less(t, len(got), 4)
	assert.Equal(t, 4, len(got)+len(sum.Failures), "each photo imported or failed by name: none lost without a word")
	sum, err = a.importWith(paths, Options{}, a.options())
	require.NoError(t, err)
	assert.Empty(t, sum.Failures)
	assert.Equal(t, []string{"d1.jpg", "d2.jpg", "d3.jpg", "good.jpg"}, titles(a))
}

// cutFile ends after left bytes read in order, as a file cut short does.
type cutFile struct {
	*os.File
	left int64
}

func (c *cutFile) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.ErrUnexpectedEOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.File.Read(p)
	c.left -= int64(n)
	return n, err
}
