package nginx

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hermes-failover/hermes/traffic"
)

// statePrefix starts the comment line that holds the machine-readable
// summary Current reads back.
const statePrefix = "# hermes-state: "

// summary is the JSON of the state line. The flags mean nothing to nginx;
// they are kept so that Current returns the state Apply was given.
// Writer is the replica's stamp (run --replica): nginx serves it with
// the split, so the other replica reads the lease back from nginx.
type summary struct {
	Service        string         `json:"service"`
	Weights        map[string]int `json:"weights"`
	RetriesEnabled bool           `json:"retries_enabled"`
	Degraded       bool           `json:"degraded_mode"`
	Writer         traffic.Stamp  `json:"writer,omitzero"`
}

// render returns the include file of one service: a header whose state
// line records st (with its writer's stamp), then the upstream block. routes are the service's
// configured server entries per route; st must give every one of them a
// weight and name no other. A route at 0 % has its servers marked down;
// the others get weight = percentage, scaled so that a route's servers
// share its percentage evenly.
//
//	# hermes-state: {"service":"chat","weights":{"free":95,"paid":5},...}
//	upstream hermes_chat {
//	    server 127.0.0.1:8001 weight=95; # free
//	    server 127.0.0.1:8002 down; # paid
//	}
func render(service, upstream string, routes map[string][]string, st traffic.Split) ([]byte, error) {
	weights, err := routeWeights(service, routes, st.Weights)
	if err != nil {
		return nil, err
	}
	// Scale so that every route's percentage divides evenly among its
	// servers: server weight = route weight × scale / servers.
	scale := 1
	for route, w := range weights {
		if w > 0 {
			scale = lcm(scale, len(routes[route]))
		}
	}
	state, err := json.Marshal(summary{
		Service:        service,
		Weights:        maps.Clone(st.Weights),
		RetriesEnabled: st.RetriesEnabled,
		Degraded:       st.Degraded,
		Writer:         traffic.Stamp{Replica: st.Writer.Replica, Tick: st.Writer.Tick.UTC()},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: encoding state: %w", service, err)
	}
	var b bytes.Buffer
	b.WriteString("# Written by hermes; changes are overwritten. retries_enabled and\n")
	b.WriteString("# degraded_mode are recorded for hermes only: nginx ignores them.\n")
	fmt.Fprintf(&b, "%s%s\n", statePrefix, state)
	fmt.Fprintf(&b, "upstream %s {\n", upstream)
	for _, route := range slices.Sorted(maps.Keys(routes)) {
		servers := routes[route]
		for _, entry := range servers {
			line := strings.Join(strings.Fields(entry), " ")
			if w := weights[route]; w > 0 {
				line += fmt.Sprintf(" weight=%d", w*scale/len(servers))
			} else {
				line += " down"
			}
			fmt.Fprintf(&b, "    server %s; # %s\n", line, route)
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// routeWeights maps each configured route to its weight in desired, whose
// route names may differ in case (configuration keys arrive lower-cased).
// Every configured route needs a weight, no other route may have one, and
// at least one weight must be positive: nginx needs a server that is up.
func routeWeights(service string, routes map[string][]string, desired map[string]int) (map[string]int, error) {
	var errs []error
	out := map[string]int{}
	for _, d := range slices.Sorted(maps.Keys(desired)) {
		route, _, ok := lookup(routes, d)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: route %q has no servers in upstreams.%s", service, d, service))
		case desired[d] < 0:
			errs = append(errs, fmt.Errorf("%s: route %q has a negative weight %d", service, d, desired[d]))
		default:
			if _, dup := out[route]; dup {
				errs = append(errs, fmt.Errorf("%s: routes of upstreams.%s.%s given twice, in different case", service, service, route))
			}
			out[route] = desired[d]
		}
	}
	total := 0
	for _, route := range slices.Sorted(maps.Keys(routes)) {
		w, ok := out[route]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no weight for route %q (upstreams.%s.%s)", service, route, service, route))
		}
		total += w
	}
	if len(errs) == 0 && total == 0 {
		errs = append(errs, fmt.Errorf("%s: every route has weight 0; nginx needs at least one server up", service))
	}
	return out, errors.Join(errs...)
}

// parseState reads the state line of an include file back.
func parseState(data []byte) (string, traffic.Split, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		js, ok := strings.CutPrefix(line, statePrefix)
		if !ok {
			continue
		}
		var s summary
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			return "", traffic.Split{}, fmt.Errorf("bad state line: %w", err)
		}
		if s.Weights == nil {
			s.Weights = map[string]int{}
		}
		return s.Service, traffic.Split{
			Weights:        s.Weights,
			RetriesEnabled: s.RetriesEnabled,
			Degraded:       s.Degraded,
			Writer:         s.Writer,
		}, nil
	}
	if err := sc.Err(); err != nil {
		return "", traffic.Split{}, err
	}
	return "", traffic.Split{}, errors.New("no hermes-state line: not written by hermes?")
}

// lookup finds key in m, exactly or else ignoring case, and returns the
// key as m spells it.
func lookup[V any](m map[string]V, key string) (string, V, bool) {
	if v, ok := m[key]; ok {
		return key, v, true
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if strings.EqualFold(k, key) {
			return k, m[k], true
		}
	}
	var zero V
	return "", zero, false
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int) int { return a / gcd(a, b) * b }
