// Command hermes is the failover evaluator for model API routes.
//
//	hermes run      --config FILE [--web.listen-address :9797]
//	hermes explain  --route ROUTE [--url URL]
//	hermes ctl      release|pin|pause|clear …
//	hermes check    --config FILE
//	hermes probe    --config FILE [--web.listen-address :9798]
//	hermes backtest --series FILE [--config FILE] [--format text|json]
//	hermes demo
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage: hermes <command> [flags]

commands:
  run       evaluate routes live next to Prometheus and shift traffic
  explain   say why a route is where it is (asks a running Hermes)
  ctl       operator controls: release, pin, pause, clear (asks a running Hermes)
  check     validate a configuration file (Hermes's or the prober's)
  probe     probe LLM routes and export llm_probe_* for Prometheus
  backtest  replay series (promtool notation) or a Prometheus through the policy
  demo      backtest the embedded default policy on an embedded scenario
  help      show this text

Run "hermes <command> -h" for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a command line; it returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "check":
		return checkCmd(rest, stdout, stderr)
	case "backtest":
		return backtestCmd(ctx, rest, stdout, stderr)
	case "demo":
		return demoCmd(ctx, rest, stdout, stderr)
	case "run":
		return runCmd(ctx, rest, stdout, stderr)
	case "explain":
		return explainCmd(ctx, rest, stdout, stderr)
	case "ctl":
		return ctlCmd(ctx, rest, stdout, stderr)
	case "probe":
		return probeCmd(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "hermes: unknown command %q\n\n%s", cmd, usage)
	return 2
}
