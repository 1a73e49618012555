package cmd

// Exit codes, the same for every command; README.md lists them.
const (
	exitOK          = 0   // everything done
	exitFatal       = 1   // any other fatal error
	exitPartial     = 2   // some files failed; the rest were saved
	exitLogin       = 3   // not logged in, or the session was rejected
	exitLocked      = 4   // another quak run holds the backup folder's lock
	exitUnusableDir = 5   // the backup folder is missing, not writable, or another account's
	exitUsage       = 64  // bad command line
	exitInterrupt   = 130 // stopped by Ctrl-C (SIGINT)
	exitTerminated  = 143 // stopped by SIGTERM
)
