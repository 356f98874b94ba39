package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// usageError is a mistake in a command's arguments or flags: it is printed
// with the command's usage line.
type usageError struct {
	cmd *cobra.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// markUsageErrors makes the argument and flag errors of cmd and every
// command under it usageErrors.
func markUsageErrors(cmd *cobra.Command) {
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &usageError{cmd: c, err: err}
			}
			return nil
		}
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{cmd: c, err: err} })
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// printError prints err as main does: with the usage line and a pointer
// to --help when it is a usageError.
func printError(w io.Writer, err error) {
	fmt.Fprintln(w, "simdex:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "Usage: %s\nRun '%s --help' for more.\n", ue.cmd.UseLine(), ue.cmd.CommandPath())
	}
}

// asUsageError makes cobra's own complaint about a required flag, which
// no hook sees, a usageError of the command that ran.
func asUsageError(cmd *cobra.Command, err error) error {
	var ue *usageError
	if err == nil || cmd == nil || errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "required flag(s)") {
		return err
	}
	return &usageError{cmd: cmd, err: err}
}
