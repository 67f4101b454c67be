// Package usage is the one usage-error idiom of the project's commands: a
// bad command line is an *Error, and the command exits 2 for it.
package usage

import (
	"errors"
	"fmt"
)

// Error is a bad command line; the command exits 2 for it.
type Error struct{ Err error }

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted message.
func Errorf(format string, args ...any) error { return &Error{fmt.Errorf(format, args...)} }

// Is reports whether err is (or wraps) an *Error.
func Is(err error) bool {
	var ue *Error
	return errors.As(err, &ue)
}
