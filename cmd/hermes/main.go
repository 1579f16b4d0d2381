// Command hermes is the failover evaluator for model API routes.
//
//	hermes run      --config FILE [--web.listen-address :9797]
//	hermes explain  --route ROUTE [--url URL]
//	hermes ctl      release|pin|pause|clear|status|drill|drills …
//	hermes check    [--config FILE]
//	hermes probe    --config FILE [--web.listen-address :9798]
//	hermes proxy    --config FILE [--web.listen-address :9799]
//	hermes backtest --series FILE… [--config FILE] [--format text|json]
//	hermes demo
//	hermes lab      [--fast] [--rate N] [--port-base N] | fault ROUTE PERCENT KIND | heal ROUTE
//	hermes help     [COMMAND [ACTION]]
//	hermes --version
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/common/version"
)

// command is one hermes command: its one-line summary for the top-level
// help and the function that runs it.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

// commands lists every command, in the order the help shows them. It is a
// function, not a variable, because "help" runs the others.
func commands() []command {
	return []command{
		{"run", runUsage.summary, runCmd},
		{"explain", explainUsage.summary, explainCmd},
		{"ctl", ctlUsage.summary, ctlCmd},
		{"check", checkUsage.summary, func(_ context.Context, args []string, stdout, stderr io.Writer) int {
			return checkCmd(args, stdout, stderr)
		}},
		{"probe", probeUsage.summary, probeCmd},
		{"proxy", proxyUsage.summary, proxyCmd},
		{"backtest", backtestUsage.summary, backtestCmd},
		{"demo", demoUsage.summary, demoCmd},
		{"lab", labUsage.summary, labCmd},
		{"help", helpUsage.summary, helpCmd},
	}
}

func main() {
	setVersion()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a command line; it returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help":
		writeUsage(stdout)
		return 0
	case "--version", "-version":
		fmt.Fprintln(stdout, version.Print("hermes"))
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hermes: unknown command %q\n\n", args[0])
	writeUsage(stderr)
	return 2
}

func writeUsage(w io.Writer) {
	fmt.Fprint(w, "usage: hermes <command> [flags] [arguments]\n\n"+
		"Hermes evaluates model API routes from Prometheus signals and shifts traffic away from failing ones.\n\ncommands:\n")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nflags:\n  --help     show this text\n  --version  print the version and build information\n\n"+
		"Run \"hermes help <command>\" or \"hermes <command> --help\" for a command's flags.\n")
}

var helpUsage = usage{name: "help", synopsis: "[COMMAND [ACTION]]", summary: "show the help of hermes or of a command"}

// helpCmd implements "hermes help [COMMAND [ACTION]]": the command's own
// --help, on stdout, exit 0.
func helpCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := helpUsage.newFlags()
	pos, code, ok := helpUsage.parse(fs, args, 0, 2, stdout, stderr)
	if !ok {
		return code
	}
	if len(pos) == 0 {
		writeUsage(stdout)
		return 0
	}
	if pos[0] == "help" {
		helpUsage.write(stdout, nil)
		return 0
	}
	for _, c := range commands() {
		if c.name == pos[0] {
			return c.run(ctx, append(pos[1:], "--help"), stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "hermes help: unknown command %q\n\n", pos[0])
	writeUsage(stderr)
	return 2
}
