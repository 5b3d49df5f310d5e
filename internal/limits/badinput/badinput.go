// Package badinput is the one error type for input the caller must fix: an
// argument the facade refuses before any upstream call (a malformed id, a
// window too large, a cursor of another list). Every package that checks
// input returns it, and the GraphQL layer renders it one way: code
// BAD_USER_INPUT, the argument named in extensions.argument.
package badinput

import (
	"fmt"
	"unicode/utf8"
)

// Error is an argument the caller must fix.
type Error struct {
	Arg     string // the argument as the caller named it: "first", "after", "parentId"
	Problem string // what is wrong with it, for the caller
	Err     error  // a sentinel the problem is a case of (paging.ErrInvalidCursor), or nil
}

func (e *Error) Error() string { return e.Arg + ": " + e.Problem }

func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error for arg.
func New(arg, problem string) *Error { return &Error{Arg: arg, Problem: problem} }

// Wrap returns an *Error for arg whose problem is err's text, and which
// unwraps to err.
func Wrap(arg string, err error) *Error { return &Error{Arg: arg, Problem: err.Error(), Err: err} }

// maxQuote bounds how much of a caller's value an error repeats: enough to
// recognise it, never a megabyte sent back.
const maxQuote = 100

// Quote quotes a value the caller sent for an error message, cut to 100
// bytes (on a rune boundary) with the original length said.
func Quote(v string) string {
	if len(v) <= maxQuote {
		return fmt.Sprintf("%q", v)
	}
	cut := maxQuote
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%q… (%d bytes)", v[:cut], len(v))
}
