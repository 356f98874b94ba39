package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
// command under it usageErrors. A command that only groups others (simdex
// hold) refuses to run without one of them, or with an unknown one, rather
// than printing its help and succeeding.
func markUsageErrors(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		groupCommand(cmd)
	}
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return &usageError{cmd: c, err: err}
			}
			return nil
		}
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{cmd: c, err: flagError(err)} })
	for _, sub := range cmd.Commands() {
		markUsageErrors(sub)
	}
}

// flagError says what a flag's value should have been, in place of the
// parser's Go words ("strconv.ParseInt: parsing \"many\": invalid syntax").
func flagError(err error) error {
	var ie *pflag.InvalidValueError
	if !errors.As(err, &ie) {
		return err
	}
	want, ok := map[string]string{
		"int": "a whole number", "int64": "a whole number", "float64": "a number",
		"bool": "true or false", "duration": "a duration such as 90s or 2h",
	}[ie.GetFlag().Value.Type()]
	if !ok {
		return err
	}
	return fmt.Errorf("--%s %q: want %s", ie.GetFlag().Name, ie.GetValue(), want)
}

// groupCommand makes cmd, which only groups subcommands, refuse an unknown
// subcommand in one line (cobra's own message takes four, with its
// suggestions). Run alone, the root prints its help; any other group
// names its subcommands in an error.
func groupCommand(cmd *cobra.Command) {
	cmd.SuggestionsMinimumDistance = 2 // cobra's default, which it sets only in its own message
	cmd.Args = func(c *cobra.Command, a []string) error {
		if len(a) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", a[0], c.CommandPath())
		if s := c.SuggestionsFor(a[0]); len(s) > 0 {
			msg += " (did you mean " + strings.Join(s, " or ") + "?)"
		}
		return errors.New(msg)
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		if !c.HasParent() {
			return c.Help()
		}
		return &usageError{cmd: c, err: fmt.Errorf("%s needs a command", c.CommandPath())}
	}
}

// printError prints err as main does: on one line, with the usage line
// (a group's commands) and a pointer to --help when it is a usageError.
func printError(w io.Writer, err error) {
	msg := oneLine(err.Error())
	var ue *usageError
	if errors.As(err, &ue) {
		msg += " (" + usageHint(ue.cmd) + ")"
	}
	fmt.Fprintln(w, "simdex:", msg)
}

// usageHint is what follows a usage error: how cmd is used and where to
// read more.
func usageHint(cmd *cobra.Command) string {
	more := "more: " + cmd.CommandPath() + " --help"
	switch {
	case !cmd.HasParent():
		return more
	case cmd.HasAvailableSubCommands():
		var names []string
		for _, sub := range cmd.Commands() {
			if sub.IsAvailableCommand() {
				names = append(names, sub.Name())
			}
		}
		return "commands: " + strings.Join(names, ", ") + "; " + more
	}
	return "usage: " + cmd.UseLine() + "; " + more
}

// oneLine joins the lines of a message (a configuration's problems, one a
// line) with "; ".
func oneLine(msg string) string {
	var parts []string
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, strings.TrimSuffix(l, ":"))
		}
	}
	return strings.Join(parts, "; ")
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

// noArgs refuses any argument, naming it (cobra's NoArgs calls it an
// unknown command).
func noArgs(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", c.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// oneArg accepts exactly one argument, called name in its errors.
func oneArg(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch len(args) {
		case 1:
			return nil
		case 0:
			return fmt.Errorf("missing %s", name)
		}
		return fmt.Errorf("one %s expected, got %d: %q", name, len(args), strings.Join(args, " "))
	}
}

// someArgs accepts one argument or more, called name in its errors.
func someArgs(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) == 0 {
			return fmt.Errorf("missing %s", name)
		}
		return nil
	}
}
