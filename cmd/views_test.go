package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/sidecars"
)

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// The view flags are remembered per folder: a later run without them keeps
// them, status shows them, and each can be turned off alone.
func TestViewFlagsAreRememberedAndShownByStatus(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	e.vars["TZ"] = "America/New_York"
	a := u.AddAlbum("Trips")
	// 03:00 UTC on 1 June is 23:00 on 31 May in New York: TZ decides the folder.
	a.AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1,
		CreationTime: time.Date(2024, 6, 1, 3, 0, 0, 0, time.UTC).UnixMicro()})
	code, out, errOut := e.run("backup", "--xmp", "--sidecars", "takeout", "--date-view", "YYYY/MM/DD", dir)
	require.Equal(t, exitOK, code, out+errOut)
	for _, p := range []string{"Trips/x.jpg.xmp", "Trips/x.jpg.supplemental-metadata.json", "By date/2024/05/31/x.jpg"} {
		assert.True(t, exists(filepath.Join(dir, p)), "%s missing", p)
	}
	assert.False(t, exists(filepath.Join(dir, "Trips/.meta/x.jpg.json")))

	code, out, errOut = e.run("backup", dir) // the cron line: nothing repeated
	require.Equal(t, exitOK, code, out+errOut)
	assert.NotContains(t, errOut, "converted")
	assert.True(t, exists(filepath.Join(dir, "By date/2024/05/31/x.jpg")))
	assert.True(t, exists(filepath.Join(dir, "Trips/x.jpg.xmp")))

	code, out, _ = e.run("status", "--offline", dir)
	require.Equal(t, exitOK, code, out)
	assert.Contains(t, out, "Metadata:      takeout sidecars, XMP, date view YYYY/MM/DD (America/New_York)\n")
	code, out, _ = e.run("status", "--offline", "--json", dir)
	require.Equal(t, exitOK, code)
	var st struct {
		Views map[string]any `json:"views"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	assert.Equal(t, map[string]any{"sidecars": "takeout", "xmp": true, "dateView": "YYYY/MM/DD", "zone": "America/New_York", "applied": true}, st.Views)

	code, out, errOut = e.run("backup", "--xmp=false", "--json", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.False(t, exists(filepath.Join(dir, "Trips/x.jpg.xmp")), "--xmp=false removes them")
	assert.True(t, exists(filepath.Join(dir, "Trips/x.jpg.supplemental-metadata.json")), "the rest is remembered")
	assert.Contains(t, errOut, "quak: converted the sidecars and date view to the folder's options: 1 file changed, nothing downloaded")
	assert.Contains(t, out, `"type":"views-changed"`)
	assert.Contains(t, out, `"files":1`)

	code, _, _ = e.run("backup", "--date-view", "none", "--sidecars", "ente", dir)
	require.Equal(t, exitOK, code)
	assert.False(t, exists(filepath.Join(dir, backup.DateViewDir)))
	assert.True(t, exists(filepath.Join(dir, "Trips/.meta/x.jpg.json")))
	m, err := folder.At(dir).ReadViewOptions()
	require.NoError(t, err)
	assert.Equal(t, sidecars.Ente, m.Sidecars)
	assert.False(t, m.XMP)
	assert.Empty(t, m.DateView)
	code, out, _ = e.run("status", "--offline", dir)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "Metadata:      ente sidecars\n")
}

func TestViewFlagMistakesAreUsageErrors(t *testing.T) {
	e, _, _, dir := loggedIn(t)
	for _, args := range [][]string{
		{"--sidecars", "google"},
		{"--date-view", "%Y/%m"},
		{"--date-view", "YYYY/../MM"},
	} {
		code, _, errOut := e.run(append(append([]string{"backup"}, args...), dir)...)
		assert.Equal(t, exitUsage, code, "%v: %s", args, errOut)
		assert.Contains(t, errOut, args[0], "the message names the flag")
	}
	e.vars["TZ"] = "Mars/Olympus_Mons"
	code, _, errOut := e.run("backup", "--date-view", "YYYY", dir)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, errOut, "Mars/Olympus_Mons")
	assert.False(t, exists(folder.At(dir).ViewOptionsPath()), "nothing remembered from a refused run")
	code, _, errOut = e.run("backup", dir)
	assert.Equal(t, exitOK, code, "without XMP or a date view no time zone is needed: %s", errOut)
}

// $TZ in each form Go and glibc read: a name, a zoneinfo file (with or
// without ":"), /etc/localtime, empty; an unknown name, a file that is no
// zoneinfo and a path that climbs out are refused, never UTC in silence.
func TestTZForms(t *testing.T) {
	const tokyo = "/usr/share/zoneinfo/Asia/Tokyo"
	if _, err := os.Stat(tokyo); err != nil {
		t.Skip("no zoneinfo files on this system")
	}
	// 20:00 UTC on 31 May: 1 June in Tokyo, 31 May in UTC.
	at := time.Date(2024, 5, 31, 20, 0, 0, 0, time.UTC)
	local := "2024/05/31"
	if b, err := os.ReadFile("/etc/localtime"); err == nil {
		loc, err := time.LoadLocationFromTZData("", b)
		require.NoError(t, err)
		local = at.In(loc).Format("2006/01/02")
	}
	for _, c := range []struct{ tz, folder, zone string }{
		{tokyo, "2024/06/01", tokyo},
		{":" + tokyo, "2024/06/01", tokyo},
		{"Asia/Tokyo", "2024/06/01", "Asia/Tokyo"},
		{":/etc/localtime", local, "local time"},
		{"UTC", "2024/05/31", "UTC"},
	} {
		t.Run(c.tz, func(t *testing.T) {
			e, _, u, dir := loggedIn(t)
			e.vars["TZ"] = c.tz
			u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1, CreationTime: at.UnixMicro()})
			code, out, errOut := e.run("backup", "--date-view", "YYYY/MM/DD", dir)
			require.Equal(t, exitOK, code, out+errOut)
			assert.True(t, exists(filepath.Join(dir, "By date", c.folder, "x.jpg")), "want By date/%s", c.folder)
			m, err := folder.At(dir).ReadViewOptions()
			require.NoError(t, err)
			assert.Equal(t, c.zone, m.Zone)
		})
	}
	for _, tz := range []string{"Mars/Olympus_Mons", "/etc/hostname-not-a-zone", "/etc/passwd", "../../etc/localtime", ":"} {
		t.Run(tz, func(t *testing.T) {
			e, _, _, dir := loggedIn(t)
			e.vars["TZ"] = tz
			code, _, errOut := e.run("backup", "--xmp", dir)
			if tz == ":" {
				assert.Equal(t, exitOK, code, "TZ=: is the system's zone: %s", errOut)
				return
			}
			assert.Equal(t, exitUsage, code, errOut)
			assert.Contains(t, errOut, "TZ=")
		})
	}
}

func TestStatusOfAFolderWithoutRememberedViews(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	code, _, _ := e.run("backup", dir)
	require.Equal(t, exitOK, code)
	assert.False(t, exists(folder.At(dir).ViewOptionsPath()), "defaults need no file")
	_, out, _ := e.run("status", "--offline", dir)
	assert.True(t, strings.Contains(out, "Metadata:      ente sidecars\n"), out)
}

func TestAnUnreadableOptionsFileIsSaidNotGuessed(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	code, _, _ := e.run("backup", "--xmp", dir)
	require.Equal(t, exitOK, code)
	require.NoError(t, os.WriteFile(folder.At(dir).ViewOptionsPath(), []byte("{not json"), 0o600))
	code, out, _ := e.run("status", "--offline", dir)
	assert.Equal(t, exitPartial, code, out)
	assert.Contains(t, out, "Problem:       "+folder.At(dir).ViewOptionsPath()+": invalid character")
	code, _, errOut := e.run("backup", dir)
	assert.Equal(t, exitFatal, code)
	assert.Contains(t, errOut, "reading the folder's remembered options")
}

func TestTZWithALeadingColon(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	e.vars["TZ"] = ":Asia/Tokyo"
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1,
		CreationTime: time.Date(2024, 5, 31, 20, 0, 0, 0, time.UTC).UnixMicro()})
	code, out, errOut := e.run("backup", "--date-view", "YYYY/MM/DD", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.True(t, exists(filepath.Join(dir, "By date/2024/06/01/x.jpg")), "05:00 on 1 June in Tokyo")
}

// A remembered options file edited by hand or damaged is checked as the
// flags are: a bad value is refused with a message naming the file, and
// nothing is written.
func TestABadRememberedOptionsFileIsRefused(t *testing.T) {
	for _, c := range []struct{ body, says string }{
		{`{"sidecars":"google","applied":true}`, `"google" is not a sidecar style`},
		{`{"sidecars":"ente","dateView":"../../x","applied":true}`, `date view "../../x"`},
		{`{"sidecars":"ente","dateView":"%Y/%m","applied":true}`, `date view "%Y/%m"`},
		{`{"sidecars":"","applied":true}`, `"" is not a sidecar style`},
		{`{"sidecars":"ente","xmp":true,"zone":"a\nb","applied":true}`, `zone:`},
		{`{"sidecars":"ente","xmp":true,"zoneRules":"../x","applied":true}`, `zoneRules:`},
	} {
		t.Run(c.says, func(t *testing.T) {
			e, _, u, dir := loggedIn(t)
			u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
			code, _, _ := e.run("backup", "--xmp", dir)
			require.Equal(t, exitOK, code)
			path := folder.At(dir).ViewOptionsPath()
			require.NoError(t, os.WriteFile(path, []byte(c.body), 0o600))
			before, err := os.ReadFile(path)
			require.NoError(t, err)
			code, _, errOut := e.run("backup", dir)
			assert.Equal(t, exitFatal, code)
			assert.Contains(t, errOut, path)
			assert.Contains(t, errOut, c.says)
			after, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after))
			assert.False(t, exists(filepath.Join(filepath.Dir(dir), "x")), "a path from the file was used")
			code, out, _ := e.run("status", "--offline", dir)
			assert.Equal(t, exitPartial, code, out)
			assert.Contains(t, out, c.says)
		})
	}
}
