//go:build !unix

package download

// noFollow: no O_NOFOLLOW here; openTempFile's Lstat is the check.
const noFollow = 0
