//go:build unix

package cmd

import (
	"context"
	"os/exec"
	"syscall"
)

// shellCommand runs command in the POSIX shell.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "sh", "-c", command)
}

// ownProcessGroup starts c in a process group of its own, so that a
// Ctrl-C at quak's terminal does not reach it and its time limit stops
// everything it started, not the shell alone.
func ownProcessGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
}
