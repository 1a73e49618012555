// Package cmd is quak's command line: it parses flags and the environment,
// wires the packages together, prints, and chooses exit codes. No other
// package prints or exits.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X .../cmd.version=...".
var version = "dev"

// deps is what commands need from the outside world, so tests can supply
// their own streams and environment.
type deps struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// Main runs quak with the process's arguments, streams and environment, and
// returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	d := deps{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := run(ctx, d, os.Args[1:])
	if ctx.Err() != nil && code != exitOK {
		return exitInterrupt
	}
	return code
}

// run executes one command line and turns its outcome into an exit code.
func run(ctx context.Context, d deps, args []string) int {
	root := newRootCmd(d)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return report(d.stderr, err)
}

func newRootCmd(d deps) *cobra.Command {
	root := &cobra.Command{
		Use:           "quak",
		Short:         "Back up an Ente Photos account to a local folder",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(d.stdin)
	root.SetOut(d.stdout)
	root.SetErr(d.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &usageError{err}
	})
	return root
}

// usageError marks a bad command line.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// report prints err for a person and returns the exit code it deserves.
// It is the one place where errors become text and codes.
func report(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(w, "quak: error: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(w, "quak: hint: run `quak --help`")
		return exitUsage
	}
	return exitFatal
}
