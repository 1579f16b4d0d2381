package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// usage describes one command or subcommand for its help text. Help asked
// for (-h, --help, "hermes help CMD") goes to stdout and exits 0; a usage
// error goes to stderr and exits 2, as in most Unix tools.
//
// The standard flag package is kept (every command already uses it, and
// Prometheus-style single-dash and double-dash flags both work); usage only
// adds what it lacks: help on stdout with exit 0 and positional-argument
// checks.
type usage struct {
	// name is the command path after "hermes", e.g. "ctl release".
	name string
	// synopsis is what follows the name in the usage line.
	synopsis string
	// summary is the one-line description.
	summary string
	// details is optional text printed after the summary.
	details string
}

// newFlags returns a flag set for u that prints nothing by itself.
func (u usage) newFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("hermes "+u.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// write prints the help of u and its flags to w.
func (u usage) write(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: hermes %s %s\n\n%s\n", u.name, u.synopsis, u.summary)
	if u.details != "" {
		fmt.Fprintf(w, "\n%s", u.details)
	}
	if fs == nil {
		return
	}
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if !has {
		return
	}
	fmt.Fprintln(w, "\nflags:")
	printFlags(w, fs)
}

// printFlags prints fs's flags as flag.PrintDefaults does, but with two
// dashes, the spelling of Prometheus's help and of Hermes's documentation
// (one dash works too).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, help := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		if len(line) <= 5 {
			line += "\t"
		} else {
			line += "\n    \t"
		}
		line += strings.ReplaceAll(help, "\n", "\n    \t")
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			format := " (default %s)"
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					format = " (default %q)"
				}
			}
			line += fmt.Sprintf(format, f.DefValue)
		}
		fmt.Fprintln(w, line)
	})
}

// configFlag defines --config and its Prometheus spelling --config.file,
// one value for both.
func configFlag(fs *flag.FlagSet, help string) *string {
	p := fs.String("config", "", help)
	fs.StringVar(p, "config.file", "", "the configuration `file`: --config in Prometheus's spelling")
	return p
}

// parse parses args with flags allowed before and after positional
// arguments, and checks that between min and max positional arguments are
// given (max < 0: no limit). When the command must stop, ok is false and
// code is its exit code: 0 after printing the help, 2 after a usage error.
func (u usage) parse(fs *flag.FlagSet, args []string, min, max int, stdout, stderr io.Writer) (pos []string, code int, ok bool) {
	pos, err := parseInterleaved(fs, args)
	switch {
	case err != nil:
		return nil, u.flagError(err, fs, stdout, stderr), false
	case len(pos) < min:
		return nil, u.fail(stderr, fs, "want %s, got %d argument(s)", argCount(min, max), len(pos)), false
	case max >= 0 && len(pos) > max:
		if max == 0 {
			return nil, u.fail(stderr, fs, "unexpected argument %q", pos[0]), false
		}
		return nil, u.fail(stderr, fs, "want %s, got %d: unexpected %q", argCount(min, max), len(pos), strings.Join(pos[max:], " ")), false
	}
	return pos, 0, true
}

// flagError handles an error of fs.Parse: the help on stdout and exit 0
// when it was asked for, else a usage error, exit 2.
func (u usage) flagError(err error, fs *flag.FlagSet, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		u.write(stdout, fs)
		return 0
	}
	return u.fail(stderr, fs, "%v", err)
}

// fail prints a usage error and the help to stderr and returns exit code 2.
func (u usage) fail(stderr io.Writer, fs *flag.FlagSet, format string, args ...any) int {
	fmt.Fprintf(stderr, "hermes %s: %s\n\n", u.name, fmt.Sprintf(format, args...))
	u.write(stderr, fs)
	return 2
}

func argCount(min, max int) string {
	switch {
	case min == max:
		return fmt.Sprintf("%d argument(s)", min)
	case max < 0:
		return fmt.Sprintf("at least %d argument(s)", min)
	}
	return fmt.Sprintf("%d to %d arguments", min, max)
}

// parseInterleaved parses flags that may come after positional arguments;
// "--" ends the flags.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// flag stops at "--" and drops it; everything after is positional.
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
