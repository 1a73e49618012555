package cmd

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A folder of --all that is gone (a test folder deleted, say) fails each
// night with a hint that says how to drop it; once forgotten, --all runs
// without it and quak accounts no longer lists it.
func TestAGoneFolderOfAllNamesHowToForgetIt(t *testing.T) {
	fam := newFamily(t, "alice", "bob")
	fam.record(t, "alice")
	fam.record(t, "bob")
	require.NoError(t, os.RemoveAll(fam.dirs["bob"]))

	forget := "quak accounts --forget " + fam.dirs["bob"]
	for _, command := range []string{"backup", "status", "verify"} {
		code, _, errOut := fam.e.run(command, "--all")
		assert.Equal(t, exitUnusableDir, code, errOut)
		assert.Contains(t, errOut, "quak: error: bob@example.org, "+fam.dirs["bob"]+": backup folder "+fam.dirs["bob"]+" does not exist\n"+
			"quak: hint: is the disk mounted? If the folder is gone for good, `"+forget+"` leaves it out of --all\n", command)
	}
	code, out, _ := fam.e.run("accounts", "--offline")
	require.Equal(t, exitOK, code)
	assert.Contains(t, out, fam.dirs["bob"]+" (missing: is the disk mounted? If it is gone for good, quak accounts --forget it)")

	code, out, errOut := fam.e.run("accounts", "--forget", fam.dirs["bob"])
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "Forgot "+fam.dirs["bob"])
	for _, command := range []string{"backup", "status", "verify"} {
		code, out, errOut := fam.e.run(command, "--all")
		assert.Equal(t, exitOK, code, command+": "+out+errOut)
		assert.NotContains(t, out+errOut, fam.dirs["bob"], command)
	}
	code, out, _ = fam.e.run("accounts", "--offline")
	require.Equal(t, exitOK, code)
	assert.NotContains(t, out, fam.dirs["bob"])
}
