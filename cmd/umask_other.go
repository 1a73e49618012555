//go:build !unix

package cmd

import "os"

func umask() os.FileMode { return 0o022 }
