package evaluator

import (
	"strconv"
	"strings"
	"time"
)

// The core writes its reasons and errors with strconv and strings, not
// fmt: fmt reaches os and reflect, and the core does no I/O and needs no
// reflection (TestCoreDeps). Each helper below is the exact text of the
// fmt verb its comment names, so reasons, errors and golden timelines
// read as they did (TestTextIsFmt compares them with fmt).

// gText is fmt's %g (and %v) of v: the shortest text that reads back as v.
func gText(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fixed is fmt's %.Nf of v, with prec digits after the point.
func fixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// digits is fmt's %.Ng of v, with prec significant digits.
func digits(v float64, prec int) string { return strconv.FormatFloat(v, 'g', prec, 64) }

// listText is fmt's %v of a []string: the names in brackets, separated
// by spaces.
func listText(names []string) string { return "[" + strings.Join(names, " ") + "]" }

// wrapError is what fmt.Errorf("%s: %w", msg, err) returns: the message,
// a colon and err's, with err behind Unwrap for errors.Is and errors.As.
type wrapError struct {
	msg string
	err error
}

// wrap is fmt.Errorf("%s: %w", msg, err).
func wrap(msg string, err error) error { return &wrapError{msg: msg, err: err} }

func (e *wrapError) Error() string { return e.msg + ": " + e.err.Error() }
func (e *wrapError) Unwrap() error { return e.err }

// WindowText writes a window as people write it, as evidence texts do:
// 2m, 90s, 1h. The status API writes a contribution's window with it.
func WindowText(d time.Duration) string { return fmtWindow(d) }
