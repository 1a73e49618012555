package cmd

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/download/folder"
)

// A last-run.json emptied or damaged (null, {}, not JSON) is said to be
// unreadable, with what to do, never read as a run with no outcome.
func TestStatusOnAnUnreadableRunRecord(t *testing.T) {
	e, _, u, dir := loggedIn(t)
	u.AddAlbum("A").AddFile(enteapitest.FileSpec{Title: "x.jpg", Size: 10, Seed: 1})
	require.Equal(t, exitOK, first(e.run("backup", dir)))
	f := folder.At(dir)
	for _, body := range []string{"null", "{}", "{\"exitCode\":0}", "{", "[1]"} {
		t.Run(body, func(t *testing.T) {
			require.NoError(t, os.WriteFile(f.LastRunPath(), []byte(body), 0o644))
			code, out, errOut := e.run("status", "--offline", dir)
			assert.Equal(t, exitPartial, code, out+errOut)
			assert.Empty(t, out, "no half-empty report")
			assert.Contains(t, errOut, "quak: error: backup not healthy: "+f.LastRunPath()+" is unreadable: it ")
			assert.Contains(t, errOut, "quak: hint: run `quak backup "+dir+"`: every run that starts writes the record again")
			assert.NotContains(t, errOut, "the last run ended  (exit code 0)")

			code, out, _ = e.run("status", "--offline", "--json", dir)
			assert.Equal(t, exitPartial, code)
			lines := jsonLinesOf(t, out)
			require.Len(t, lines, 1, "a monitor reading --json hears of it: %s", out)
			assert.Equal(t, "error", lines[0]["type"])
			assert.EqualValues(t, exitPartial, lines[0]["exitCode"])
		})
	}
	require.Equal(t, exitOK, first(e.run("backup", dir)), "the next run writes it again")
	code, out, errOut := e.run("status", "--offline", dir)
	assert.Equal(t, exitOK, code, out+errOut)

	require.NoError(t, os.WriteFile(f.LastSuccessPath(), []byte("null"), 0o644))
	code, lines := statusOf(t, e, dir)
	assert.Equal(t, exitStale, code, lines)
	assert.Contains(t, lines, "Problem:       "+f.LastSuccessPath()+" is unreadable: it holds no run")
	assert.NotContains(t, lines, "no backup run has fully succeeded yet")
}

// A very first backup records its folder as it starts: quak status --all
// during it finds the folder, and says its first run is in progress.
func TestStatusAllSeesAFirstBackupInProgress(t *testing.T) {
	e, s, u, dir := loggedIn(t)
	big := u.AddAlbum("Videos").AddFile(enteapitest.FileSpec{Title: "long.mp4", Size: 48 << 20, Seed: 7})
	stallMidFile(s, fmt.Sprintf("GET /store/%d/file-%d", u.ID, big.ID))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		code, _, _ := e.runCtx(ctx, "backup", "--streams", ranges, dir)
		done <- code
	}()
	select {
	case <-s.Stalled:
	case <-time.After(20 * time.Second):
		t.Fatal("the backup never reached its file")
	}
	code, _, errOut := e.run("status", "--all", "--offline")
	cancel()
	assert.NotEqual(t, exitUsage, code, errOut)
	assert.NotContains(t, errOut, "no backup folder is recorded")
	assert.Contains(t, errOut, "the first backup run is in progress and has not finished")
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the backup did not stop")
	}
}
