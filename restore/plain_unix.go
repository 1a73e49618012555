//go:build unix

package restore

import "syscall"

// plainFlags open a file without following a link at its name, and
// without waiting for a FIFO's writer (the file is then refused).
const plainFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// noLinkBefore: O_NOFOLLOW refuses a link at open.
func noLinkBefore(string) error { return nil }
