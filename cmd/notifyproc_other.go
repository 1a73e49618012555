//go:build !unix

package cmd

import (
	"context"
	"os/exec"
)

// shellCommand runs command in cmd.exe.
func shellCommand(ctx context.Context, command string) *exec.Cmd {
	return exec.CommandContext(ctx, "cmd", "/C", command)
}

// ownProcessGroup does nothing here: the time limit stops the shell.
func ownProcessGroup(*exec.Cmd) {}
