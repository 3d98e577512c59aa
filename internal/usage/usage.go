// Package usage marks the errors of a command line the tools cannot run:
// a bad flag value, flags that do not go together, a missing argument.
// The commands exit with status 2 for them (1 for any other error), in
// every layer that finds one (the flags, goprobe's runtime).
package usage

import (
	"errors"
	"fmt"
)

// Error is a usage error: Err says what is wrong with the command line.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Wrap marks err as a usage error (nil stays nil).
func Wrap(err error) error {
	if err == nil {
		return nil
	}
	return &Error{err}
}

// Errorf is Wrap(fmt.Errorf(format, args...)).
func Errorf(format string, args ...any) error { return &Error{fmt.Errorf(format, args...)} }

// Is reports whether err is, or wraps, a usage error.
func Is(err error) bool {
	var u *Error
	return errors.As(err, &u)
}
