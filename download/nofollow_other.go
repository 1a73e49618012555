//go:build !unix

package download

import "os"

// noFollow: no O_NOFOLLOW here; openTempFile's Lstat is the check.
const noFollow = 0

// oneName: link counts are not looked at here.
func oneName(os.FileInfo) bool { return true }
