//go:build unix

package download

import "syscall"

// noFollow makes an open fail on a symlink.
const noFollow = syscall.O_NOFOLLOW
