package folder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/download/state"
)

var now = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// backedUp is a folder with a state and the records given.
func backedUp(t *testing.T, last, success *RunRecord) *Folder {
	t.Helper()
	f := prepared(t)
	st, err := f.OpenState()
	require.NoError(t, err)
	require.NoError(t, st.SetAccount(state.Account{UserID: 1}))
	require.NoError(t, st.Close())
	if success != nil {
		require.NoError(t, f.WriteRun(success, true))
	}
	if last != nil {
		require.NoError(t, f.WriteRun(last, false))
	}
	return f
}

func ok(end time.Time) *RunRecord {
	return &RunRecord{Outcome: OutcomeOK, End: end, Started: true}
}

func check(t *testing.T, f *Folder) *Health {
	t.Helper()
	h, err := f.Health(HealthCheck{Now: now, MaxAge: 36 * time.Hour})
	require.NoError(t, err)
	return h
}

func kinds(h *Health) []Kind {
	var out []Kind
	for _, p := range h.Problems {
		out = append(out, p.Kind)
	}
	return out
}

func TestAHealthyBackupHasNoProblem(t *testing.T) {
	r := ok(now.Add(-time.Hour))
	f := backedUp(t, r, r)
	before := listing(t, f.Dir)
	h := check(t, f)
	assert.Empty(t, h.Problems)
	assert.Equal(t, before, listing(t, f.Dir), "looking leaves nothing behind")
	assert.Equal(t, r.End, h.Last.End)
	assert.NotNil(t, h.Success)
}

func TestStaleness(t *testing.T) {
	for name, tc := range map[string]struct {
		success *RunRecord
		stale   bool
		says    string
	}{
		"never":             {nil, true, "no backup run has fully succeeded yet"},
		"just in time":      {ok(now.Add(-36 * time.Hour)), false, ""},
		"a second too old":  {ok(now.Add(-36*time.Hour - time.Second)), true, "more than --max-age 36h"},
		"a minute ahead":    {ok(now.Add(time.Minute)), false, ""},
		"two minutes ahead": {ok(now.Add(2 * time.Minute)), true, "clock skew"},
	} {
		t.Run(name, func(t *testing.T) {
			h := check(t, backedUp(t, ok(now), tc.success))
			if !tc.stale {
				assert.Empty(t, h.Problems)
				return
			}
			require.Equal(t, []Kind{Stale}, kinds(h))
			assert.Contains(t, h.Problems[0].Msg, tc.says)
		})
	}
}

func TestWhatTheLastRunSays(t *testing.T) {
	msg := "3 files could not be backed up"
	for name, tc := range map[string]struct {
		last *RunRecord
		says string
	}{
		"partial":       {&RunRecord{Outcome: OutcomePartial, ExitCode: 2, Error: &msg, End: now}, "the last run ended partial (exit code 2): " + msg},
		"album":         {&RunRecord{Outcome: OutcomeOK, Counts: Counts{AlbumsFailed: 2}, End: now}, "albums the last run could not list: 2"},
		"metadata only": {&RunRecord{Outcome: OutcomeOK, MetadataOnly: true, End: now}, "--metadata-only"},
		"prune refused": {&RunRecord{Outcome: OutcomeOK, PruneRefused: "too many", End: now}, "--prune was refused, so it was no full backup: too many"},
	} {
		t.Run(name, func(t *testing.T) {
			h := check(t, backedUp(t, tc.last, ok(now)))
			require.Equal(t, []Kind{Failing}, kinds(h))
			assert.Contains(t, h.Problems[0].Msg, tc.says)
		})
	}
}

func TestARefusedRunSinceTheLastIsAProblem(t *testing.T) {
	f := backedUp(t, ok(now), ok(now))
	require.NoError(t, f.WriteRefusal(Refusal{ExitCode: 4, Error: "locked", Time: now}))
	h := check(t, f)
	require.Equal(t, []Kind{Failing}, kinds(h))
	assert.Contains(t, h.Problems[0].Msg, "refused before it started (exit code 4): locked")

	require.NoError(t, os.WriteFile(f.RefusalPath(), []byte("{"), 0o644))
	h = check(t, f)
	require.Equal(t, []Kind{Failing}, kinds(h))
	assert.Contains(t, h.Problems[0].Msg, "does not read")
}

func TestADamagedStateOrOptionsIsAProblem(t *testing.T) {
	f := backedUp(t, ok(now), ok(now))
	require.NoError(t, os.WriteFile(f.StateFile(), []byte(strings.Repeat("x", 8192)), 0o600))
	require.NoError(t, os.WriteFile(f.ViewOptionsPath(), []byte("{"), 0o600))
	h := check(t, f)
	assert.Equal(t, []Kind{Failing, Failing}, kinds(h))
	assert.Contains(t, h.Problems[0].Msg, "the state database does not open")
	assert.Contains(t, h.Problems[1].Msg, f.ViewOptionsPath())
}

func TestAFolderThatCannotBeWrittenIsUnusable(t *testing.T) {
	f := backedUp(t, ok(now), ok(now))
	asked := ""
	h, err := f.Health(HealthCheck{Now: now, MaxAge: time.Hour, CanWrite: func(dir string) error {
		asked = dir
		return errors.New("read-only file system")
	}})
	require.NoError(t, err)
	assert.Equal(t, []Kind{Unusable}, kinds(h))
	assert.Equal(t, f.StateDir(), asked)
}

func TestNoRecord(t *testing.T) {
	_, err := At(t.TempDir()).Health(HealthCheck{Now: now})
	var de *DirError
	require.ErrorAs(t, err, &de)
	assert.Contains(t, de.Reason, "has no recorded backup run")

	f := backedUp(t, nil, nil)
	_, err = f.Health(HealthCheck{Now: now})
	var nr *NoRecordError
	require.ErrorAs(t, err, &nr)
	assert.False(t, nr.InProgress)
	assert.Contains(t, nr.Error(), "could not record how it went")

	unlock, err := f.Lock()
	require.NoError(t, err)
	defer unlock()
	_, err = f.Health(HealthCheck{Now: now})
	require.ErrorAs(t, err, &nr)
	assert.True(t, nr.InProgress, "a first run holds the lock")
}

func TestAgo(t *testing.T) {
	assert.Equal(t, "42s", Ago(41700*time.Millisecond))
	assert.Equal(t, "1m0s", Ago(time.Minute))
	assert.Equal(t, "47h59m0s", Ago(48*time.Hour-time.Minute))
	assert.Equal(t, "2 days", Ago(48*time.Hour))
}

// A record that says ok and an exit code of failure contradicts itself:
// damaged or edited, it is no proof of health.
func TestAContradictoryRecordIsAProblem(t *testing.T) {
	last := ok(now)
	last.ExitCode = 2
	h := check(t, backedUp(t, last, ok(now)))
	require.Equal(t, []Kind{Failing}, kinds(h))
	assert.Contains(t, h.Problems[0].Msg, "contradicts itself")
}

// listing is every path under dir, quak's own folder included.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		out = append(out, p)
		return err
	}))
	return out
}
