package backup

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// What quak changed under a folder is looked at again: the folder itself
// and those under it are forgotten as plain, others are not.
func TestForgettingAFolderForgetsItAndWhatIsUnderIt(t *testing.T) {
	d := newRealDisk(nil)
	a, sub, b := filepath.Join("D", "A"), filepath.Join("D", "A", "sub"), filepath.Join("D", "AB")
	for _, p := range []string{a, sub, b} {
		d.plain[p] = true
	}
	d.forgetPlain(a)
	assert.Equal(t, map[string]bool{b: true}, d.plain)
}
