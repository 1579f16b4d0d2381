// Package nginx is the `type: nginx` actuator: it writes one upstream block
// per service into a file nginx includes, with each route's servers
// weighted by the route's percentage (down at 0 %), checks the result with
// `nginx -t` and reloads nginx.
//
//	# hermes-state: {"service":"chat","weights":{"free":95,"paid":5,"spare":0},...}
//	upstream hermes_chat {
//	    server 127.0.0.1:8001 weight=95; # free
//	    server 127.0.0.1:8002 weight=5; # paid
//	    server 127.0.0.1:8003 down; # spare
//	}
//
// A file is replaced atomically and only when its content changes, so an
// unchanged state neither writes nor reloads, once Hermes knows nginx runs
// the files: with state_listen it asks nginx what it serves and reloads
// whenever that differs (state.go); without it, a new actuator (a restart)
// tests and reloads once at its first Apply, and so does the Apply after a
// reload whose outcome is unknown. When `nginx -t` or the
// reload fails, the files of that Apply are put back as they were (or
// removed, when they did not exist) and the error carries nginx's message.
// Current reads the hermes-state line back. nginx has no notion of
// retries_enabled or degraded_mode: they are recorded in that line only,
// as is the writer's stamp that two replicas lease nginx by (lease.go).
//
// nginx's side includes the files in its http block and proxies to the
// upstreams by name:
//
//	http {
//	    include /etc/nginx/hermes/*.conf;
//	    server {
//	        location /v1/chat/ { proxy_pass http://hermes_chat; }
//	    }
//	}
//
// A reload is asynchronous: nginx starts new workers with the new
// configuration and lets the old ones finish their requests. A reload
// that the master itself rejects after `nginx -t` passed (e.g. a port it
// cannot bind) shows only in nginx's error log.
package nginx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/hermes-failover/hermes/actuators"
)

// Kind is the `type:` of this actuator.
const Kind = "nginx"

// Actuator keeps nginx upstream blocks in line with the desired state.
type Actuator struct {
	actuators.Named
	handled []string // keys of cfg.Upstreams, sorted
	cfg     Config
	logger  *slog.Logger

	stateClient *http.Client // for state_listen (state.go)

	mu sync.Mutex // serialises Apply
	// unsure is set when files on disk may differ from what nginx runs and
	// Hermes cannot ask nginx (no state_listen): at start (a crash may have
	// come between a write and its reload), after a failed restore, after a
	// test or reload whose outcome is unknown. The next Apply then tests
	// and reloads even if no file changes.
	unsure bool
}

// New builds an nginx actuator from its settings. When s.Services is set,
// upstreams must list exactly those services.
func New(s actuators.Settings) (*Actuator, error) {
	c, err := ParseConfig(s.Options)
	if err != nil {
		return nil, err
	}
	if err := checkServices(s.Services, c.Upstreams); err != nil {
		return nil, err
	}
	return &Actuator{Named: actuators.Named(s.Name), handled: sortedKeys(c.Upstreams), cfg: c, logger: s.Logger,
		stateClient: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		unsure:      true}, nil
}

// Register adds the nginx actuator to r.
func Register(r *actuators.Registry) { r.Register(Kind, actuators.FactoryOf(New)) }

// checkServices cross-checks the actuator's services and upstreams.
func checkServices(services []string, upstreams map[string]map[string][]string) error {
	if len(services) == 0 {
		return nil
	}
	var errs []error
	for _, s := range services {
		if _, _, ok := lookup(upstreams, s); !ok {
			errs = append(errs, fmt.Errorf("upstreams: service %q (from services) must be listed", s))
		}
	}
	for _, u := range sortedKeys(upstreams) {
		if !slices.ContainsFunc(services, func(s string) bool { return strings.EqualFold(s, u) }) {
			errs = append(errs, fmt.Errorf("upstreams.%s: not in this actuator's services %q", u, services))
		}
	}
	return errors.Join(errs...)
}

// IncludePath is the include file of a service, as upstreams names it.
func (a *Actuator) IncludePath(service string) string {
	return expand(a.cfg.IncludePath, service)
}

// Apply renders the upstream block of every service it handles that
// desired holds (services absent from desired keep their file), writes the
// files that changed, tests the configuration and reloads nginx. On
// failure it restores the files and nginx keeps its previous split.
func (a *Actuator) Apply(ctx context.Context, desired actuators.Splits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()

	files, want, err := a.render(desired)
	if err != nil {
		return err
	}
	changed, err := writeFiles(files, a.cfg.Mode)
	if err != nil {
		return err
	}
	if len(changed) == 0 {
		switch {
		case a.cfg.StateListen != "":
			got, err := a.Current(ctx)
			if err == nil && serves(got, want) {
				a.logger.Debug("nginx serves the upstreams", "files", len(files))
				return nil
			}
			a.logger.Warn("nginx does not serve what its include files hold: reloading", "serves", formatSplits(got), "err", err)
		case !a.unsure:
			a.logger.Debug("nginx upstreams up to date", "files", len(files))
			return nil
		}
	}
	if err := a.test(ctx); err != nil {
		return a.rollback(changed, err)
	}
	if err := a.reload(ctx); err != nil {
		// A reload that timed out may have been taken: nginx may run
		// the new files or the old ones. The files go back; the next
		// Apply reloads whatever it finds.
		a.unsure = true
		return a.rollback(changed, err)
	}
	if a.cfg.StateListen != "" {
		if err := a.waitServed(ctx, want); err != nil {
			a.unsure = true
			return err
		}
	}
	a.unsure = false
	paths := make([]string, len(changed))
	for i, c := range changed {
		paths[i] = c.path
	}
	a.logger.Info("nginx reloaded with new upstreams", "files", paths)
	return nil
}

// render is the include file of every service it handles that desired
// holds, and the splits they hold.
func (a *Actuator) render(desired actuators.Splits) ([]wantFile, actuators.Splits, error) {
	var (
		files []wantFile
		errs  []error
		want  = actuators.Splits{}
	)
	for _, svc := range a.handled {
		name, st, ok := lookup(desired, svc)
		if !ok {
			continue
		}
		st, err := a.keepNewer(a.IncludePath(svc), name, st)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		data, err := render(name, expand(a.cfg.UpstreamName, svc), a.cfg.Upstreams[svc], st)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if a.cfg.StateListen != "" {
			srv, err := stateServer(a.cfg.StateListen, expand(a.cfg.UpstreamName, svc), data)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			data = append(data, srv...)
		}
		files = append(files, wantFile{path: a.IncludePath(svc), data: data})
		want[name] = st
	}
	return files, want, errors.Join(errs...)
}

// WriteInitial writes the include file of every service it handles that
// desired holds and that has no include file yet, and returns their paths;
// it never changes a file that exists, and neither tests nor reloads
// nginx. nginx's configuration names the upstreams (proxy_pass
// http://hermes_chat), so `nginx -t` and nginx's start fail until the
// files exist: `hermes check --write-initial` writes them before nginx
// first starts.
func (a *Actuator) WriteInitial(desired actuators.Splits) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	files, _, err := a.render(desired)
	if err != nil {
		return nil, err
	}
	var missing []wantFile
	for _, f := range files {
		_, ok, err := readFile(f.path)
		if err != nil {
			return nil, err
		}
		if !ok {
			missing = append(missing, f)
		}
	}
	if _, err := writeFiles(missing, a.cfg.Mode); err != nil {
		return nil, fmt.Errorf("writing the initial include files: %w", err)
	}
	paths := make([]string, len(missing))
	for i, f := range missing {
		paths[i] = f.path
	}
	return paths, nil
}

// rollback restores the files an Apply changed and returns its error.
func (a *Actuator) rollback(changed []previous, cause error) error {
	if len(changed) == 0 {
		return cause
	}
	if err := restore(changed); err != nil {
		a.unsure = true
		a.logger.Error("could not restore nginx include files", "err", err)
		return fmt.Errorf("%w; restoring the previous include files failed too: %w", cause, err)
	}
	var restored, removed []string
	for _, c := range changed {
		if c.existed {
			restored = append(restored, c.path)
		} else {
			removed = append(removed, c.path)
		}
	}
	var did []string
	if len(restored) > 0 {
		did = append(did, "restored "+strings.Join(restored, ", "))
	}
	if len(removed) > 0 {
		did = append(did, "removed the new "+strings.Join(removed, ", "))
	}
	return fmt.Errorf("%w (%s)", cause, strings.Join(did, "; "))
}

// Current reads what nginx serves when state_listen is set (state.go),
// else the hermes-state line of every include file. A service whose file
// does not exist, or whose state nginx does not serve, is absent.
func (a *Actuator) Current(ctx context.Context) (actuators.Splits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a.cfg.StateListen != "" {
		return a.served(ctx)
	}
	out := actuators.Splits{}
	var errs []error
	for _, svc := range a.handled {
		path := a.IncludePath(svc)
		data, ok, err := readFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		name, st, err := parseState(data)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		case !strings.EqualFold(name, svc):
			errs = append(errs, fmt.Errorf("%s: holds service %q, want %q", path, name, svc))
		default:
			out[name] = st
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}
