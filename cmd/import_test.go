package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tt "github.com/quak-photos/quak/restore/takeout/takeouttest"
)

// aTakeout writes a little Takeout in two zip parts: a photo in a year
// folder and an album, its JSON in the other part, a photo without JSON
// and one in Google's trash.
func aTakeout(t *testing.T) []string {
	t.Helper()
	files := []tt.File{
		{Name: tt.GP + "Photos from 2020/IMG_1.jpg", Data: tt.JPEG(1)},
		{Name: tt.GP + "Photos from 2020/IMG_1.jpg.json", Data: tt.PhotoJSON("IMG_1.jpg", 1580558400, nil)},
		{Name: tt.GP + "Holiday/IMG_1.jpg", Data: tt.JPEG(1)},
		{Name: tt.GP + "Holiday/IMG_1.jpg.supplemental-metadata.json", Data: tt.PhotoJSON("IMG_1.jpg", 1580558400, nil)},
		{Name: tt.GP + "Holiday/metadata.json", Data: tt.AlbumJSON("Holiday")},
		{Name: tt.GP + "Photos from 2020/nojson.jpg", Data: tt.JPEG(2)},
		{Name: tt.GP + "Trash/IMG_3.jpg", Data: tt.JPEG(3)},
		{Name: tt.GP + "Trash/IMG_3.jpg.json", Data: tt.PhotoJSON("IMG_3.jpg", 1580558400, map[string]any{"trashed": true})},
	}
	return tt.WriteParts(t, t.TempDir(), tt.Split(files, 2), "zip")
}

func TestImportTakeoutDryRunNeedsNoLoginAndSendsNothing(t *testing.T) {
	e := newEnv(t)
	paths := aTakeout(t)
	code, out, errOut := e.run(append([]string{"import", "takeout", "--dry-run"}, paths...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Takeout: 2 photos and videos in 2 parts (0 live photos), 1 album")
	assert.Contains(t, out, "Albums: Holiday (1)")
	assert.Contains(t, errOut, "unmatched: "+paths[1]+": Takeout/Google Photos/Photos from 2020/nojson.jpg: no metadata JSON found")
	assert.Contains(t, errOut, "skipped: "+paths[0]+": Takeout/Google Photos/Trash/IMG_3.jpg: in Google's trash")
}

func TestImportTakeoutUploadsOnceAndTellsInJSON(t *testing.T) {
	e, s, _, _ := loggedIn(t)
	paths := aTakeout(t)
	code, out, errOut := e.run(append([]string{"import", "takeout"}, paths...)...)
	require.Equal(t, exitOK, code, errOut)
	assert.Regexp(t, `\n2 of 2 files uploaded to alice@example.org \([^)]+\), 0 already there, 0 album additions, 2 albums created; 0 failed\n$`, out)
	assert.Contains(t, errOut, "the report names 2 files or folders")
	assert.Equal(t, 2, s.Requests("POST /files"))

	code, out, errOut = e.run(append([]string{"import", "takeout", "--json"}, paths...)...)
	require.Equal(t, exitOK, code, errOut)
	types := map[string]int{}
	var sum map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		types[ev["type"].(string)]++
		sum = ev
	}
	assert.Equal(t, map[string]int{"part": 2, "album": 1, "note": 2, "takeout": 1, "present": 2, "summary": 1}, types)
	assert.EqualValues(t, 0, sum["uploaded"], "a second run uploads nothing")
	assert.EqualValues(t, 2, sum["present"])
	assert.Equal(t, 2, s.Requests("POST /files"))
}

func TestImportTakeoutExitCodes(t *testing.T) {
	e := newEnv(t)
	code, _, errOut := e.run("import", "takeout", filepath.Join(t.TempDir(), "nowhere.zip"))
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "nowhere.zip: does not exist")
	notTakeout := filepath.Join(t.TempDir(), "notes.txt")
	tt.WriteDir(t, filepath.Dir(notTakeout), []tt.File{{Name: "notes.txt", Data: []byte("hello")}})
	code, _, errOut = e.run("import", "takeout", notTakeout)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.Contains(t, errOut, "is not a Takeout part")
	code, _, _ = e.run("import", "takeout")
	assert.Equal(t, exitUsage, code)
	code, _, _ = e.run(append([]string{"import", "takeout"}, aTakeout(t)...)...)
	assert.Equal(t, exitLogin, code, "a real import needs a login")
}

func TestImportTakeoutDryRunJSONIsTheReport(t *testing.T) {
	e := newEnv(t)
	paths := aTakeout(t)
	code, out, errOut := e.run(append([]string{"import", "takeout", "--dry-run", "--json"}, paths...)...)
	require.Equal(t, exitOK, code, errOut)
	var kinds []string
	var notes []map[string]any
	var last map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &ev), line)
		kinds = append(kinds, ev["type"].(string))
		if ev["type"] == "note" {
			notes = append(notes, ev)
		}
		last = ev
	}
	assert.Equal(t, []string{"part", "part", "album", "note", "note", "takeout", "summary"}, kinds)
	assert.Equal(t, "skipped", notes[0]["kind"])
	assert.Equal(t, "in Google's trash", notes[0]["reason"])
	assert.Equal(t, "unmatched", notes[1]["kind"])
	assert.Equal(t, true, last["dryRun"])
	assert.EqualValues(t, 2, last["files"])
	assert.EqualValues(t, 0, last["exitCode"])
}

// A damaged part is named, the rest imports, and the exit says so.
func TestImportTakeoutNamesADamagedPartAndExitsPartial(t *testing.T) {
	e, s, _, _ := loggedIn(t)
	paths := aTakeout(t)
	bad := filepath.Join(t.TempDir(), "takeout-bad.zip")
	tt.WriteZip(t, bad, []tt.File{{Name: tt.GP + "Photos from 2021/x.jpg", Data: tt.Noise(100<<10, 9)}})
	b, err := os.ReadFile(bad)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bad, b[:len(b)/2], 0o644))
	code, out, errOut := e.run(append([]string{"import", "takeout", "--dry-run"}, append(paths, bad)...)...)
	assert.Equal(t, exitPartial, code, errOut)
	assert.Contains(t, out, "takeout-bad.zip: 0 photos and videos; DAMAGED: its directory cannot be read")
	code, out, errOut = e.run(append([]string{"import", "takeout"}, append(paths, bad)...)...)
	assert.Equal(t, exitPartial, code, errOut)
	assert.Contains(t, out, "2 of 2 files uploaded")
	assert.Contains(t, errOut, "1 part could not be read whole ("+bad+")")
	assert.Equal(t, 2, s.Requests("POST /files"))
}

// An entry whose zip directory declares more than Ente takes in one file
// (or more than an int64 holds) fails alone, named with its cause, and is
// left out of the storage check: the rest imports.
func TestImportTakeoutEntryTooLargeFailsAlone(t *testing.T) {
	for name, claim := range map[string]uint64{"beyond int64": 1<<64 - 100, "huge": 1 << 62, "just over 10 GiB": 10<<30 + 1} {
		t.Run(name, func(t *testing.T) {
			e, s, _, _ := loggedIn(t)
			p := filepath.Join(t.TempDir(), "takeout-20240525T201456Z-001.zip")
			tt.WriteZip(t, p, []tt.File{
				{Name: tt.GP + "Photos from 2020/good.jpg", Data: tt.JPEG(1)},
				{Name: tt.GP + "Photos from 2020/good.jpg.json", Data: tt.PhotoJSON("good.jpg", 1580558400, nil)},
				{Name: tt.GP + "Photos from 2020/bad.jpg", Data: tt.JPEG(2), Claim: claim},
				{Name: tt.GP + "Photos from 2020/bad.jpg.json", Data: tt.PhotoJSON("bad.jpg", 1580558400, nil)},
			})
			for _, told := range []string{`\n1 of 2 files uploaded to alice@example.org \([^)]+\), 0 already there, 0 album additions, 1 album created; 1 failed\n$`,
				`\n0 of 2 files uploaded to alice@example.org \(0 B\), 1 already there, 0 album additions, 0 albums created; 1 failed\n$`} {
				code, out, errOut := e.run("import", "takeout", p) // a second run finds the same, without crashing
				require.Equal(t, exitPartial, code, errOut)
				assert.Regexp(t, told, out, errOut)
				assert.Contains(t, errOut, "failed: "+p+": Takeout/Google Photos/Photos from 2020/bad.jpg: larger than the 10 GiB Ente takes in one file")
			}
			assert.Equal(t, 1, s.Requests("POST /files"))
		})
	}
}

// Names from the Takeout (entries, album titles, the part's path) reach
// the terminal escaped in every line of the report; JSON keeps them exact.
func TestImportTakeoutShowsNamesEscaped(t *testing.T) {
	e, _, _, _ := loggedIn(t)
	dir := filepath.Join(t.TempDir(), "p\x1b[1m")
	require.NoError(t, os.Mkdir(dir, 0o755))
	p := filepath.Join(dir, "takeout-20240525T201456Z-001.zip")
	tt.WriteZip(t, p, []tt.File{
		{Name: tt.GP + "\x1b[31mRed/a.jpg", Data: tt.JPEG(1)},
		{Name: tt.GP + "\x1b[31mRed/a.jpg.json", Data: tt.PhotoJSON("a.jpg", 1580558400, nil)},
		{Name: tt.GP + "\x1b[31mRed/metadata.json", Data: tt.AlbumJSON("\x1b[31mRed")},
		{Name: tt.GP + "Photos from 2020/\x1b]0;owned\a.jpg", Data: tt.JPEG(2)},
		{Name: tt.GP + "Trash/\x1b[2J\r\nquak: forged.jpg", Data: tt.JPEG(3)},
		{Name: tt.GP + "Trash/\x1b[2J\r\nquak: forged.jpg.json", Data: tt.PhotoJSON("x.jpg", 1580558400, map[string]any{"trashed": true})},
	})
	for _, args := range [][]string{{"--dry-run"}, {"-v"}} {
		code, out, errOut := e.run(append(append([]string{"import", "takeout"}, args...), p)...)
		require.Equal(t, exitOK, code, errOut)
		for _, s := range []string{out, errOut} {
			assert.NotContains(t, s, "\x1b", args)
			assert.NotContains(t, s, "\r", args)
			assert.NotContains(t, s, "\a", args)
			assert.NotContains(t, s, "\nquak: forged", args)
		}
		if args[0] == "--dry-run" {
			assert.Contains(t, out, `p\x1b[1m/takeout-20240525T201456Z-001.zip: 3 photos and videos`)
			assert.Contains(t, out, "Albums: [31mRed (1)", "the title keeps no control character")
			assert.Contains(t, errOut, `unmatched: `+shown(p)+`: Takeout/Google Photos/Photos from 2020/\x1b]0;owned\a.jpg: no metadata JSON found`)
			assert.Contains(t, errOut, `skipped: `+shown(p)+`: Takeout/Google Photos/Trash/\x1b[2J\r\nquak: forged.jpg: in Google's trash`)
		} else {
			assert.Contains(t, errOut, "created album [31mRed")
			assert.Contains(t, errOut, "uploaded ]0;owned.jpg")
		}
	}
	code, out, errOut := e.run("import", "takeout", "--dry-run", "--json", p)
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, `"\u001b[31mRed"`, "JSON keeps names exact")
	assert.Contains(t, out, `Trash/\u001b[2J\r\nquak: forged.jpg`)
}
