package folder

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a verify found stays recorded until a backup repairs it or a
// verify that checked those files finds them whole; a sampled verify
// keeps what it did not look at again.
func TestAVerifyRecordKeepsDamageUntilRepaired(t *testing.T) {
	f := backedUp(t, ok(now), ok(now))
	_, err := f.LastVerify()
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NoError(t, f.VerifyRepaired(now), "nothing recorded: nothing to repair")

	first := []Damage{{FileID: 1, Kind: "missing", Path: "A/a.jpg"}, {FileID: 2, Kind: "changed", Path: "A/b.heic"},
		{FileID: 2, Kind: "changed", Path: "A/b.mov"}}
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now, Checked: 3, Total: 3, Damaged: first}, map[int64]bool{1: true, 2: true, 3: true}))
	rec, err := f.LastVerify()
	require.NoError(t, err)
	assert.Equal(t, first, rec.Open())
	assert.Equal(t, []int64{1, 2}, rec.Pending(), "each file once")

	// A sample that checked file 1 (whole now) and 3, not 2: 2 stays.
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now, Checked: 2, Total: 3, Damaged: []Damage{}}, map[int64]bool{1: true, 3: true}))
	rec, err = f.LastVerify()
	require.NoError(t, err)
	assert.Equal(t, first[1:], rec.Damaged)

	// A sample that found 2 again does not list it twice.
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now, Damaged: []Damage{first[1]}}, map[int64]bool{2: true}))
	rec, err = f.LastVerify()
	require.NoError(t, err)
	assert.Equal(t, first[1:2], rec.Damaged)

	h := check(t, f)
	assert.Equal(t, []Kind{Failing}, kinds(h))
	assert.Equal(t, first[1:2], h.Damaged)

	require.NoError(t, f.VerifyRepaired(now.Add(time.Minute)))
	rec, err = f.LastVerify()
	require.NoError(t, err)
	require.NotNil(t, rec.Repaired)
	assert.Equal(t, Seconds(now.Add(time.Minute)), *rec.Repaired)
	assert.Empty(t, rec.Open())
	assert.Empty(t, rec.Pending())
	assert.Empty(t, check(t, f).Problems, "repaired: healthy")

	// Repaired damage is not carried into the next record.
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now}, map[int64]bool{}))
	rec, err = f.LastVerify()
	require.NoError(t, err)
	assert.Empty(t, rec.Damaged)
	assert.Nil(t, rec.Repaired)
}

// A record keeps at most 1,000 findings, and status names three of them
// and how many more.
func TestAVerifyRecordIsCappedAndNamedInShort(t *testing.T) {
	f := backedUp(t, ok(now), ok(now))
	var many []Damage
	for i := range maxDamage + 5 {
		many = append(many, Damage{FileID: int64(i + 1), Kind: "missing", Path: fmt.Sprintf("A/%d.jpg", i+1)})
	}
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now, Damaged: many}, nil))
	rec, err := f.LastVerify()
	require.NoError(t, err)
	assert.Len(t, rec.Damaged, maxDamage)
	h := check(t, f)
	require.Len(t, h.Problems, 1)
	assert.Equal(t, "quak verify found files missing or changed at 2026-06-01T12:00:00Z: A/1.jpg (missing), A/2.jpg (missing), "+
		"A/3.jpg (missing), and 997 more; the next backup downloads them again", h.Problems[0].Msg)

	all := map[int64]bool{}
	for _, d := range many {
		all[d.FileID] = true
	}
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now, Damaged: many[:3]}, all))
	assert.Contains(t, check(t, f).Problems[0].Msg, "A/3.jpg (missing); the next backup", "three named, no more")

	require.NoError(t, os.WriteFile(f.LastVerifyPath(), []byte("{"), 0o644))
	h = check(t, f)
	require.Len(t, h.Problems, 1)
	assert.Contains(t, h.Problems[0].Msg, "what the last verify found does not read: ")
	require.NoError(t, f.WriteVerify(&VerifyRecord{Time: now}, nil), "a damaged record is replaced")
}

// A run record that is no run, or no JSON, is a *RecordError naming the
// file; each outcome quak writes reads.
func TestARunRecordThatHoldsNoRunIsUnreadable(t *testing.T) {
	f := backedUp(t, ok(now), ok(now))
	for _, body := range []string{"null", "{}", `{"outcome":"maybe"}`, "{", `"ok"`} {
		require.NoError(t, os.WriteFile(f.LastRunPath(), []byte(body), 0o644))
		_, err := f.LastRun()
		var re *RecordError
		require.ErrorAs(t, err, &re, body)
		assert.Equal(t, f.LastRunPath(), re.Path)
		assert.Contains(t, err.Error(), f.LastRunPath()+" is unreadable: it ")
		_, err = f.Health(HealthCheck{Now: now, MaxAge: time.Hour})
		require.ErrorAs(t, err, &re, body)
	}
	for _, o := range []string{OutcomeOK, OutcomePartial, OutcomeInterrupted, OutcomeFailed} {
		require.NoError(t, os.WriteFile(f.LastRunPath(), []byte(`{"outcome":"`+o+`"}`), 0o644))
		r, err := f.LastRun()
		require.NoError(t, err, o)
		assert.Equal(t, o, r.Outcome)
	}
	require.NoError(t, os.WriteFile(f.LastSuccessPath(), []byte("{}"), 0o644))
	h := check(t, f)
	require.NotEmpty(t, h.Problems)
	assert.Equal(t, Stale, h.Problems[0].Kind)
	assert.Contains(t, h.Problems[0].Msg, f.LastSuccessPath()+" is unreadable")
	assert.Nil(t, h.Success)
}
