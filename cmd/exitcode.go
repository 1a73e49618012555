package cmd

// Exit codes, the same for every command; README.md lists them.
const (
	exitOK          = 0   // everything done
	exitFatal       = 1   // any other fatal error
	exitPartial     = 2   // some files failed; the rest were saved
	exitLogin       = 3   // not logged in, or the session was rejected
	exitLocked      = 4   // another quak run holds the backup folder's lock
	exitUnusableDir = 5   // the backup folder is missing, not writable, or another account's
	exitStale       = 6   // (status) no fully successful run within --max-age, or none yet
	exitUsage       = 64  // bad command line
	exitTempFail    = 75  // the server could not be reached: try again later (EX_TEMPFAIL)
	exitInterrupt   = 130 // stopped by Ctrl-C (SIGINT)
	exitTerminated  = 143 // stopped by SIGTERM
)

// worstFirst orders exit codes for runs over several folders (--all),
// which end with the worst of their codes; README.md lists the order. A
// code not listed counts as bad as exitFatal. An unreachable server (75)
// ranks below the failures a person must fix (1, 5, 3), which another
// folder's run would otherwise hide, and above a held lock, a stale
// backup and failed files: the run it ended did not back up at all.
var worstFirst = []int{exitTerminated, exitInterrupt, exitFatal, exitUnusableDir, exitLogin, exitTempFail, exitLocked, exitStale, exitPartial, exitOK}

// worse is the worse of two exit codes by worstFirst.
func worse(a, b int) int {
	if rank(b) < rank(a) {
		return b
	}
	return a
}

func rank(code int) int {
	for i, c := range worstFirst {
		if c == code {
			return i
		}
	}
	return 2 // as exitFatal
}
