package cmd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A folder that is not there is named as such before anything about
// accounts: not logged in, or several accounts to choose from.
func TestAMissingFolderComesBeforeAccounts(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "Photoz")
	want := "quak: error: backup folder " + missing + " does not exist"
	code, _, errOut := newEnv(t).run("status", missing)
	assert.Equal(t, exitUnusableDir, code, errOut)
	assert.True(t, strings.HasPrefix(errOut, want+" (is the disk mounted?)\n"), errOut)

	fam := newFamily(t, "alice", "bob")
	for _, args := range [][]string{{"backup", missing}, {"status", missing}} {
		code, _, errOut := fam.e.run(args...)
		assert.Equal(t, exitUnusableDir, code, "%v: %s", args, errOut)
		assert.True(t, strings.HasPrefix(errOut, want), "%v: %s", args, errOut)
		assert.NotContains(t, errOut, "--account", args)
	}
}
