package nginx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/actuators"
)

// What nginx serves. The include files say what Hermes wrote, not what
// nginx runs: a crash between writing a file and reloading nginx, a
// reload that timed out or that the master refused leave the two apart,
// for as long as the files do not change. `nginx -T` does not help: it
// dumps the files on disk too. So, with state_listen set, every include
// file carries, next to its upstream block, a server block that returns
// the file's state line:
//
//	server {
//	    listen 127.0.0.1:9145;
//	    server_name hermes-state.hermes_chat;
//	    location = /hermes-state { return 200 '{"service":"chat",...}'; }
//	}
//
// nginx answers it from the configuration its workers loaded, the same
// generation as the upstream block, so Current reads the split nginx
// serves, and Apply reloads whenever that differs from the files, changed
// or not. After a reload the old workers may answer for a moment: Apply
// waits, within command_timeout, until nginx serves the new state.

// stateHost is the Host under which nginx answers an upstream's state.
func stateHost(upstream string) string { return "hermes-state." + upstream }

// statePath is the location of the state server block.
const statePath = "/hermes-state"

// stateServer is the server block that serves the state line of data.
func stateServer(listen, upstream string, data []byte) ([]byte, error) {
	var js string
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, statePrefix); ok {
			js = v
		}
	}
	// nginx would expand $ and end the string at a quote; route and
	// service names never hold them, but the check keeps it that way.
	if js == "" || strings.ContainsAny(js, "$'\\\n") {
		return nil, fmt.Errorf("%s: the state line %q cannot be served by nginx", upstream, js)
	}
	var b bytes.Buffer
	b.WriteString("# Answers the state above for hermes (state_listen): what nginx runs.\n")
	fmt.Fprintf(&b, "server {\n    listen %s;\n    server_name %s;\n    access_log off;\n", listen, stateHost(upstream))
	fmt.Fprintf(&b, "    location = %s {\n        default_type application/json;\n        return 200 '%s';\n    }\n}\n", statePath, js)
	return b.Bytes(), nil
}

// served asks nginx which state it serves for every handled service. A
// service nginx answers nothing for (its server block not loaded: the
// default server of the address answers another service, or none) is
// absent. An unreachable state_listen is an error.
func (a *Actuator) served(ctx context.Context) (actuators.Splits, error) {
	out := actuators.Splits{}
	var errs []error
	for _, svc := range a.handled {
		upstream := expand(a.cfg.UpstreamName, svc)
		body, status, err := a.getState(ctx, upstream)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if status != http.StatusOK {
			continue
		}
		name, st, err := parseState(append([]byte(statePrefix), body...))
		if err != nil || !strings.EqualFold(name, svc) {
			continue // another service's block answered: ours is not loaded
		}
		out[name] = st
	}
	return out, errors.Join(errs...)
}

// getState GETs one upstream's state from state_listen.
func (a *Actuator) getState(ctx context.Context, upstream string) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.CommandTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.cfg.StateListen+statePath, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("asking nginx what it serves: %w", err)
	}
	req.Host = stateHost(upstream)
	req.Close = true // a new connection: answered by the newest workers
	resp, err := a.stateClient.Do(req)
	if err != nil {
		return nil, 0, transient{fmt.Errorf("asking nginx what it serves (state_listen %s): %w", a.cfg.StateListen, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxOutput))
	if err != nil {
		return nil, 0, transient{fmt.Errorf("asking nginx what it serves (state_listen %s): %w", a.cfg.StateListen, err)}
	}
	return body, resp.StatusCode, nil
}

// waitServed waits, within command_timeout, until nginx serves want, with
// its writers' stamps (serves), after a reload (old workers finish their requests and close their sockets).
func (a *Actuator) waitServed(ctx context.Context, want actuators.Splits) error {
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.CommandTimeout, errCommandTimeout)
	defer cancel()
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		got, err := a.Current(ctx)
		if err == nil && serves(got, want) {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if err == nil {
				err = fmt.Errorf("serves %s", formatSplits(got))
			}
			return transient{fmt.Errorf("nginx reloaded but does not serve the new upstreams (%s): %w", a.stopped(ctx, time.Since(start)), err)}
		case <-t.C:
		}
	}
}

// formatSplits is the weights of every service of s, for messages.
func formatSplits(s actuators.Splits) string {
	if len(s) == 0 {
		return "nothing"
	}
	var parts []string
	for svc, sp := range s {
		parts = append(parts, svc+" "+actuators.FormatWeights(sp.Weights))
	}
	return strings.Join(parts, ", ")
}
