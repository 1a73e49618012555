package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/state"
)

func prepared(t *testing.T) *Folder {
	t.Helper()
	f, err := Prepare(t.TempDir(), Use{})
	require.NoError(t, err)
	return f
}

func TestPrepareRefusesWhatIsNoBackupFolder(t *testing.T) {
	root := t.TempDir()
	missing := filepath.Join(root, "disk")
	_, err := Prepare(missing, Use{})
	var de *DirError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Error(), "does not exist")
	assert.Equal(t, missing, de.Dir, "named as the user gave it")
	assert.NoDirExists(t, missing, "never created without init")

	file := filepath.Join(root, "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = Prepare(file, Use{Init: true})
	require.ErrorAs(t, err, &de)

	f, err := Prepare(missing, Use{Init: true})
	require.NoError(t, err)
	assert.DirExists(t, f.Temp())
	fi, err := os.Stat(f.Temp())
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

func TestADryPrepareWritesNothing(t *testing.T) {
	dir := t.TempDir()
	_, err := Prepare(dir, Use{DryRun: true})
	require.NoError(t, err)
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, es)
}

func TestLinksInQuaksOwnFoldersAreRefused(t *testing.T) {
	for _, rel := range []string{StateDir, filepath.Join(StateDir, tempDir), filepath.Join(StateDir, trashDir)} {
		t.Run(rel, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o700))
			require.NoError(t, os.Symlink(elsewhere, filepath.Join(dir, rel)))
			_, err := Prepare(dir, Use{})
			var de *DirError
			require.ErrorAs(t, err, &de)
			assert.Contains(t, de.Reason, "symbolic link")
			es, _ := os.ReadDir(elsewhere)
			assert.Empty(t, es, "nothing written through the link")
		})
	}
}

func TestLockIsHeldByOneAtATime(t *testing.T) {
	f := prepared(t)
	unlock, err := f.Lock()
	require.NoError(t, err)
	_, err = At(f.Dir).Lock()
	assert.ErrorIs(t, err, ErrLocked)
	unlock()
	unlock, err = f.Lock()
	require.NoError(t, err)
	unlock()
}

// A run refused the lock is told who holds it: the command, the process
// and since when; once let go, the lock file names no one.
func TestALockSaysWhoHoldsIt(t *testing.T) {
	f := prepared(t)
	before := time.Now().Add(-time.Second)
	unlock, err := f.LockFor("verify")
	require.NoError(t, err)
	_, err = At(f.Dir).LockFor("backup")
	var le *LockedError
	require.ErrorAs(t, err, &le)
	require.ErrorIs(t, err, ErrLocked)
	require.NotNil(t, le.Holder)
	assert.Equal(t, "verify", le.Holder.Command)
	assert.Equal(t, os.Getpid(), le.Holder.PID)
	assert.False(t, le.Holder.Since.Before(before.Truncate(time.Second)), le.Holder.Since)
	assert.False(t, le.Holder.Since.After(time.Now()), le.Holder.Since)
	assert.Equal(t, fmt.Sprintf("another quak run holds this folder: quak verify, process %d, since %s",
		os.Getpid(), le.Holder.Since.Local().Format(time.RFC3339)), err.Error())
	unlock()

	b, err := os.ReadFile(filepath.Join(f.Dir, StateDir, lockFile))
	require.NoError(t, err)
	assert.Empty(t, b, "a lock let go names no one")
	unlock, err = f.Lock()
	require.NoError(t, err)
	_, err = f.Lock()
	require.ErrorAs(t, err, &le)
	require.NotNil(t, le.Holder)
	assert.Contains(t, err.Error(), fmt.Sprintf("holds this folder: a quak run, process %d", os.Getpid()), "no command given")
	unlock()

	for _, note := range []string{"not json", `{"command":"backup","pid":0}`} {
		require.NoError(t, os.WriteFile(filepath.Join(f.Dir, StateDir, lockFile), []byte(note), 0o600))
		assert.Nil(t, f.holder(), "%s names no one", note)
	}
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, StateDir, lockFile), []byte(`{"command":"backup","pid":1}`), 0o600))
	require.NotNil(t, f.holder(), "process 1 is a process")
	require.NoError(t, os.WriteFile(filepath.Join(f.Dir, StateDir, lockFile), []byte("not json"), 0o600))
	held, err := durable.TryLock(filepath.Join(f.Dir, StateDir, lockFile)) // a quak that writes no note
	require.NoError(t, err)
	_, err = f.Lock()
	require.ErrorAs(t, err, &le)
	assert.Nil(t, le.Holder)
	assert.Equal(t, ErrLocked.Error(), err.Error())
	held()
}

// The records keep the keys quak has always written, in the same order,
// so monitors and older quaks read them as before.
func TestARunRecordKeepsItsKeys(t *testing.T) {
	f := prepared(t)
	msg := "boom"
	rec := &RunRecord{Outcome: OutcomePartial, Error: &msg, ExitCode: 2, Start: Seconds(time.Unix(1700000000, 5e8)),
		Counts: Counts{New: 3, Failed: 1}, Reasons: map[string]int{"network": 1}, FailedIDs: []int64{7}}
	require.NoError(t, f.WriteRun(rec, false))
	b, err := os.ReadFile(f.LastRunPath())
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &m))
	want := []string{"bytes", "counts", "duration", "email", "end", "endpoint", "error", "exitCode", "failedIDs", "failures",
		"metadataOnly", "outcome", "pruneRefused", "reasons", "start", "started", "totalBytes", "totalFiles", "userID", "version"}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	assert.Equal(t, want, keys)
	assert.Equal(t, `"2023-11-14T22:13:20Z"`, string(m["start"]), "to the second, in UTC")
	assert.Less(t, strings.Index(string(b), `"bytes"`), strings.Index(string(b), `"version"`), "in the order of their names")
	var counts map[string]int
	require.NoError(t, json.Unmarshal(m["counts"], &counts))
	assert.Len(t, counts, 16)
	assert.Equal(t, 3, counts["new"])

	got, err := f.LastRun()
	require.NoError(t, err)
	assert.Equal(t, rec, got)
	_, err = f.LastSuccess()
	assert.ErrorIs(t, err, os.ErrNotExist, "only a success is recorded as one")
}

func TestARunSupersedesARefusal(t *testing.T) {
	f := prepared(t)
	require.NoError(t, f.WriteRefusal(Refusal{ExitCode: 4, Error: "locked"}))
	r, err := f.LastRefusal()
	require.NoError(t, err)
	assert.Equal(t, 4, r.ExitCode)
	require.NoError(t, f.WriteRun(&RunRecord{Outcome: OutcomeOK}, true))
	_, err = f.LastRefusal()
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, err = f.LastSuccess()
	require.NoError(t, err)
}

func TestARefusalIsRecordedOnlyInABackup(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "disk")
	require.NoError(t, At(missing).WriteRefusal(Refusal{ExitCode: 5}))
	assert.NoDirExists(t, missing)

	plain := t.TempDir()
	require.NoError(t, At(plain).WriteRefusal(Refusal{ExitCode: 5}))
	assert.NoDirExists(t, filepath.Join(plain, StateDir), "a folder that is no backup is not made one")

	odd := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(odd, StateDir), []byte("x"), 0o644))
	var de *DirError
	require.ErrorAs(t, At(odd).WriteRefusal(Refusal{}), &de)

	linked, elsewhere := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(linked, StateDir)))
	require.ErrorAs(t, At(linked).WriteRefusal(Refusal{}), &de)
	es, _ := os.ReadDir(elsewhere)
	assert.Empty(t, es, "never written through a link")
}

func TestViewOptionsRoundTripAndRefuseWhatFlagsWould(t *testing.T) {
	f := prepared(t)
	none, err := f.ReadViewOptions()
	require.NoError(t, err)
	assert.Nil(t, none)
	v := ViewOptions{Sidecars: "takeout", XMP: true, DateView: "YYYY/MM", Zone: "Europe/Paris", ZoneRules: "0123456789abcdef", Applied: true}
	require.NoError(t, f.WriteViewOptions(v))
	got, err := f.ReadViewOptions()
	require.NoError(t, err)
	assert.Equal(t, v, *got)
	// The longest zone name taken, and a space, which no control
	// character check may refuse.
	for _, zone := range []string{strings.Repeat("a", 255), "Etc/Some Where"} {
		v := ViewOptions{Sidecars: "ente", Zone: zone}
		require.NoError(t, f.WriteViewOptions(v))
		got, err := f.ReadViewOptions()
		require.NoError(t, err, zone)
		assert.Equal(t, zone, got.Zone)
	}
	for name, bad := range map[string]string{
		"style":  `{"sidecars":"Ente"}`,
		"date":   `{"sidecars":"ente","dateView":"%Y"}`,
		"zone":   `{"sidecars":"ente","zone":"a\u0001b"}`,
		"rules":  `{"sidecars":"ente","zoneRules":"xyz"}`,
		"short":  `{"sidecars":"ente","zoneRules":"0123"}`,
		"long":   `{"sidecars":"ente","zone":"` + strings.Repeat("a", 256) + `"}`,
		"broken": `{`,
	} {
		require.NoError(t, os.WriteFile(f.ViewOptionsPath(), []byte(bad), 0o644))
		_, err := f.ReadViewOptions()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), f.ViewOptionsPath(), name)
	}
}

func TestCopyStateLeavesTheOriginalAlone(t *testing.T) {
	f := prepared(t)
	st, drop, err := f.CopyState() // none yet: an empty one
	require.NoError(t, err)
	require.NoError(t, st.SetAccount(state.Account{UserID: 1, Email: "a@b"}))
	drop()
	assert.False(t, f.HasState(), "a dry run makes no state")

	st, err = f.OpenState()
	require.NoError(t, err)
	require.NoError(t, st.SetAccount(state.Account{UserID: 2, Email: "c@d"}))
	require.NoError(t, st.Close())
	cp, drop, err := f.CopyState()
	require.NoError(t, err)
	a, err := cp.Account()
	require.NoError(t, err)
	assert.Equal(t, int64(2), a.UserID)
	require.NoError(t, cp.SetAccount(state.Account{UserID: 3}))
	drop()
	owner, err := f.Owner()
	require.NoError(t, err)
	assert.Equal(t, int64(2), owner.UserID, "the copy's changes stay in the copy")
}

func TestOwnerOfAFolderWithoutBackupIsNone(t *testing.T) {
	a, err := At(t.TempDir()).Owner()
	require.NoError(t, err)
	assert.Nil(t, a)
}

func TestCheckStateTellsADamagedDatabase(t *testing.T) {
	f := prepared(t)
	assert.True(t, errors.Is(f.CheckState(), os.ErrNotExist))
	require.NoError(t, os.WriteFile(f.StateFile(), []byte(strings.Repeat("x", 8192)), 0o600))
	assert.ErrorContains(t, f.CheckState(), "not a quak state database")
}

func TestAFolderIsAbsoluteAndItsErrorsReadWhole(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	f := At("some/dir")
	assert.Equal(t, filepath.Join(wd, "some", "dir"), f.Dir)
	assert.Equal(t, "some/dir", f.Shown, "messages name it as given")
	e := &DirError{Dir: "d", Reason: "is missing"}
	assert.Equal(t, "backup folder d is missing", e.Error())
	e.Err = errors.New("cause")
	assert.Equal(t, "backup folder d is missing: cause", e.Error())
}
