package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// A file quak verify found changed or missing makes quak status unhealthy,
// naming it, until a backup downloads it again; a sampled verify that did
// not look at it again keeps it; verify pings the health check as backup
// does.
func TestStatusStaysUnhealthyAfterVerifyFoundDamage(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	a := u.AddAlbum("A")
	var files []*enteapitest.File
	for i := range 12 {
		files = append(files, a.AddFile(enteapitest.FileSpec{Title: fmt.Sprintf("f%02d.jpg", i), Size: 100, Seed: byte(i + 1)}))
	}
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	var pings pingLog
	srv := pings.server(t)
	e.vars["QUAK_HEALTHCHECK_URL"] = srv.URL + "/v"
	code, out, errOut := e.run("verify", dir)
	require.Equal(t, exitOK, code, out+errOut)
	require.Equal(t, []string{"GET /v/start", "POST /v"}, pings.pings, "verify pings as backup does")
	assert.Contains(t, pings.bodies[1], "exit code 0\n12 of 12 files checked")

	changed, missing := filepath.Join(dir, "A", "f10.jpg"), filepath.Join(dir, "A", "f11.jpg")
	require.NoError(t, os.WriteFile(changed, []byte("rotten"), 0o644))
	require.NoError(t, os.Remove(missing))
	code, out, errOut = e.run("verify", dir)
	require.Equal(t, exitPartial, code, out+errOut)
	assert.Contains(t, out, "quak status reports the missing and changed files until the next quak backup "+dir+" downloads them again")
	require.Len(t, pings.pings, 4)
	assert.Equal(t, "POST /v/fail", pings.pings[3])
	assert.Contains(t, pings.bodies[3], "exit code 2\nINCOMPLETE (exit code 2): 12 of 12 files checked (")
	assert.Contains(t, pings.bodies[3], "1 missing, 1 changed")

	unhealthy := func(when string) {
		t.Helper()
		code, lines := statusOf(t, e, dir)
		assert.Equal(t, exitPartial, code, when)
		assert.Contains(t, lines, "Problem:       quak verify found files missing or changed at ", when)
		assert.Contains(t, lines, "A/f10.jpg (changed), A/f11.jpg (missing); the next backup downloads them again", when)
		code, out, _ := e.run("status", "--offline", dir)
		assert.Equal(t, exitPartial, code)
		assert.Contains(t, out, "Damaged:       2 files missing or changed, found by quak verify\n"+
			fmt.Sprintf("  file %d, A/f10.jpg: changed\n  file %d, A/f11.jpg: missing\n", files[10].ID, files[11].ID), when)
		code, out, _ = e.run("status", "--offline", "--json", dir)
		assert.Equal(t, exitPartial, code)
		st := ofType(jsonLinesOf(t, out), "status")
		require.Len(t, st, 1)
		assert.Len(t, st[0]["damaged"], 2, when)
	}
	unhealthy("after verify")

	code, out, errOut = e.run("verify", "--sample", "10", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, out, "2 of 12 files checked", "the sample looked at two others")
	unhealthy("after a sample that did not look at them")

	code, out, errOut = e.run("backup", dir)
	require.Equal(t, exitOK, code, out+errOut)
	assert.Contains(t, errOut, "quak: 2 files the last verify found missing or changed: downloading them again")
	requireFile(t, changed, files[10].Plaintext())
	requireFile(t, missing, files[11].Plaintext())
	code, lines := statusOf(t, e, dir)
	assert.Equal(t, exitOK, code, "a backup that downloaded them again clears it: %s", lines)
	code, out, _ = e.run("backup", dir)
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, "0 new", "nothing downloaded twice")

	require.NoError(t, os.Remove(missing))
	require.Equal(t, exitPartial, first(e.run("verify", dir)))
	code, _ = statusOf(t, e, dir)
	require.Equal(t, exitPartial, code)
	require.NoError(t, os.WriteFile(missing, files[11].Plaintext(), 0o644))
	require.Equal(t, exitOK, first(e.run("verify", dir)))
	code, lines = statusOf(t, e, dir)
	assert.Equal(t, exitOK, code, "a verify that finds it whole clears it: %s", lines)
	rec, err := folder.At(dir).LastVerify()
	require.NoError(t, err)
	assert.Empty(t, rec.Damaged)
	assert.Equal(t, 12, rec.Checked)
}

// verify --all pings once for every folder together.
func TestVerifyAllPingsOnce(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	fam.record(t, "alice")
	fam.record(t, "bob")
	var pings pingLog
	srv := pings.server(t)
	code, out, errOut := fam.e.run("verify", "--all", "--healthcheck-url", srv.URL+"/v")
	require.Equal(t, exitOK, code, out+errOut)
	assert.Equal(t, []string{"GET /v/start", "POST /v"}, pings.pings)
	assert.False(t, strings.Contains(strings.Join(pings.bodies, ""), "token"))
}
