package folder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withState(t *testing.T, dir string) {
	t.Helper()
	f, err := Prepare(dir, Use{Init: true, AllowNested: true})
	require.NoError(t, err)
	st, err := f.OpenState()
	require.NoError(t, err)
	require.NoError(t, st.Close())
}

// Issue 31: a first backup into the folder that holds a family's backups,
// or into an album folder of one, is refused, naming what is there.
func TestAFirstBackupBesideOrInsideOthersIsRefused(t *testing.T) {
	photos := t.TempDir()
	alice, carol := filepath.Join(photos, "alice"), filepath.Join(photos, "deep", "er", "carol")
	withState(t, alice)
	withState(t, carol)
	require.NoError(t, os.MkdirAll(filepath.Join(alice, "Second album"), 0o755))

	var ne *NestedError
	require.ErrorAs(t, At(photos).CheckNested(), &ne)
	assert.Equal(t, []string{alice, carol}, ne.Holds)
	assert.Contains(t, ne.Error(), "holds other backups")

	require.ErrorAs(t, At(filepath.Join(alice, "Second album")).CheckNested(), &ne)
	assert.Equal(t, alice, ne.Inside)
	assert.Contains(t, ne.Error(), "is inside the backup "+alice)

	assert.NoError(t, At(alice).CheckNested(), "a backup is what it is")
	assert.NoError(t, At(filepath.Join(photos, "bob")).CheckNested(), "a new folder beside them is fine")
	deeper := filepath.Join(t.TempDir(), "a", "b", "c", "d")
	withState(t, deeper)
	assert.NoError(t, At(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(deeper))))).CheckNested(), "four folders down is not looked at")
}
