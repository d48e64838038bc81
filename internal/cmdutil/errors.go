package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// usageError marks an error in how the command was called: unknown command,
// bad flag, wrong number of arguments (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// UsageError marks err as a usage error (exit code 2).
func UsageError(err error) error { return usageError{err} }

// Usagef returns a usage error (exit code 2) with a formatted message.
func Usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// IsUsageError reports whether err, or an error it wraps, is a usage error.
func IsUsageError(err error) bool {
	var u usageError
	return errors.As(err, &u)
}

// ExactArgs is cobra.ExactArgs with a usage error naming the arguments
// wanted.
func ExactArgs(n int, names string) cobra.PositionalArgs {
	return RangeArgs(n, n, names)
}

// RangeArgs is cobra.RangeArgs with a usage error naming the arguments
// wanted.
func RangeArgs(min, max int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < min || len(args) > max {
			return Usagef("%s takes %s (got %d argument(s)); see %s --help", cmd.Name(), names, len(args), cmd.CommandPath())
		}
		return nil
	}
}
