// Package unleash is the `type: unleash` actuator: it shifts traffic by
// setting feature flags in Unleash (7.x) through its Admin API, for
// gateways that read the routes with an Unleash SDK (getVariant).
//
// For each service, the routes flag (hermes-<service>-route unless
// routes_flag says otherwise) is created if missing (type "operational"),
// switched on in the environment, and given one strategy, flexibleRollout
// at 100 % titled "hermes", whose variants are the routes:
//
//	split free 95 %, paid 5 %  →  free: weight 950 (variable), paid: weight 50 (fix)
//
// Weights are per mille; a route at 0 % keeps its variant at weight 0.
// Hermes owns the routes flag's strategies in its environment: any other
// strategy there is deleted (with a warning), so that SDKs see exactly
// the split. The optional degraded_mode_flag and retries_enabled_flag are
// switched on and off in the environment (and created if missing). With
// run --replica the strategy's parameters also carry the writer's stamp
// (lease.go).
//
// Apply reads before it writes and sends nothing when Unleash already
// holds the state, so re-asserting it every tick costs a few GETs.
// Failures are *Error values; IsRetryable tells 5xx, 429 and transport
// failures (worth a retry) from the rest.
package unleash

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// Kind is the `type:` of this actuator.
const Kind = "unleash"

// flagType is the type of the flags Hermes creates.
const flagType = "operational"

// Actuator sets feature flags in Unleash.
type Actuator struct {
	actuators.Named
	cfg    Config
	logger *slog.Logger
	http   *http.Client

	mu sync.Mutex // serialises Apply
}

// New builds an unleash actuator from its settings; flags must name only
// s.Services, when set. It reads admin_token_file once to report a missing
// or empty file early.
func New(s actuators.Settings) (*Actuator, error) {
	c, err := ParseConfig(s.Options, s.Services...)
	if err != nil {
		return nil, err
	}
	if _, err := c.token(); err != nil {
		return nil, err
	}
	return &Actuator{
		Named:  actuators.Named(s.Name),
		cfg:    c,
		logger: s.Logger,
		http:   &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
	}, nil
}

// Register adds the unleash actuator to r.
func Register(r *actuators.Registry) { r.Register(Kind, actuators.FactoryOf(New)) }

func (a *Actuator) client() (*client, error) {
	tok, err := a.cfg.token()
	if err != nil {
		return nil, err
	}
	return &client{
		http:    a.http,
		base:    a.cfg.URL,
		token:   tok,
		project: a.cfg.Project,
		env:     a.cfg.Environment,
		timeout: a.cfg.Timeout,
	}, nil
}

// flags returns the flags of a service, the default routes flag if it
// has no entry.
func (a *Actuator) flags(service string) Flags {
	if f, ok := a.cfg.Flags[service]; ok {
		return f
	}
	return Flags{Routes: DefaultRoutesFlag(service)}
}

// Apply makes Unleash hold the desired split and toggles of every
// service of desired. Every service is tried; the errors are joined,
// each naming its service.
func (a *Actuator) Apply(ctx context.Context, desired actuators.Splits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c, err := a.client()
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range slices.Sorted(maps.Keys(desired)) {
		if err := a.applyService(ctx, c, s, desired[s]); err != nil {
			errs = append(errs, fmt.Errorf("service %s: %w", s, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

func (a *Actuator) applyService(ctx context.Context, c *client, service string, st traffic.Split) error {
	fl := a.flags(service)
	if err := checkName(fl.Routes); err != nil {
		return fmt.Errorf("routes flag %w (set flags[%s].routes_flag)", err, service)
	}
	st, err := a.keepNewer(ctx, c, service, st)
	if err != nil {
		return err
	}
	vs, err := variantsFor(st.Weights)
	if err != nil {
		return err
	}
	if err := a.applyRoutes(ctx, c, service, fl.Routes, vs, st.Writer); err != nil {
		return err
	}
	for _, t := range []struct {
		flag string
		on   bool
	}{{fl.DegradedMode, st.Degraded}, {fl.RetriesEnabled, st.RetriesEnabled}} {
		if t.flag == "" {
			continue
		}
		if err := a.applyToggle(ctx, c, service, t.flag, t.on); err != nil {
			return err
		}
	}
	return nil
}

// applyRoutes makes the routes flag exist, carry exactly Hermes' strategy
// with the variants vs and the writer's stamp w, and be on in the
// environment.
func (a *Actuator) applyRoutes(ctx context.Context, c *client, service, flag string, vs []variant, w traffic.Stamp) error {
	log := a.logger.With("service", service, "flag", flag, "environment", c.env)
	f, err := c.getFeature(ctx, flag)
	if err != nil {
		return err
	}
	env := &environment{Name: c.env}
	if f == nil {
		err := c.createFeature(ctx, feature{Name: flag, Type: flagType, Description: "Routes of " + service + ", set by Hermes"})
		if err != nil {
			return err
		}
		log.Info("created routes flag", "project", c.project)
	} else if env, err = c.environment(f); err != nil {
		return err
	}
	want := strategyFor(flag, vs, w)
	ours, others := pick(env.Strategies)
	switch {
	case ours == nil:
		if err := c.createStrategy(ctx, flag, want); err != nil {
			return err
		}
		log.Info("set routes", "split", splitString(vs))
	case !ours.matches(want):
		if err := c.updateStrategy(ctx, flag, ours.ID, want); err != nil {
			return err
		}
		log.Info("set routes", "split", splitString(vs), "was", splitString(ours.Variants))
	case !ours.sameStamp(want):
		if err := c.updateStrategy(ctx, flag, ours.ID, want); err != nil {
			return err
		}
		log.Debug("renewed the writer's stamp", "split", splitString(vs), "writer", w.Replica, "tick", w.Tick)
	default:
		log.Debug("routes up to date", "split", splitString(vs))
	}
	for _, o := range others {
		if err := c.deleteStrategy(ctx, flag, o.ID); err != nil {
			return err
		}
		log.Warn("deleted a strategy that would override the split", "strategy", o.Name, "title", o.Title, "id", o.ID)
	}
	if !env.Enabled {
		if err := c.setEnabled(ctx, flag, true); err != nil {
			return err
		}
		log.Info("switched routes flag on")
	}
	return nil
}

// applyToggle makes a toggle flag exist and be on or off in the environment.
func (a *Actuator) applyToggle(ctx context.Context, c *client, service, flag string, on bool) error {
	log := a.logger.With("service", service, "flag", flag, "environment", c.env)
	f, err := c.getFeature(ctx, flag)
	if err != nil {
		return err
	}
	enabled := false
	if f == nil {
		if err := c.createFeature(ctx, feature{Name: flag, Type: flagType, Description: "Set by Hermes for " + service}); err != nil {
			return err
		}
		log.Info("created flag", "project", c.project)
	} else {
		env, err := c.environment(f)
		if err != nil {
			return err
		}
		enabled = env.Enabled
	}
	if enabled == on {
		return nil
	}
	if err := c.setEnabled(ctx, flag, on); err != nil {
		return err
	}
	log.Info("switched flag", "on", on)
	return nil
}

// Current reads the split and toggles of the actuator's services back
// from Unleash. A service is absent unless its routes flag is on in the
// environment with Hermes' strategy (or a flexibleRollout one) carrying
// variants, that is unless SDKs would route by it. A missing toggle flag
// reads as off.
func (a *Actuator) Current(ctx context.Context) (actuators.Splits, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	services, err := a.knownServices(ctx, c)
	if err != nil {
		return nil, err
	}
	out := actuators.Splits{}
	for _, s := range services {
		st, ok, err := a.currentService(ctx, c, s)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", s, err)
		}
		if ok {
			out[s] = st
		}
	}
	return out, nil
}

// knownServices are the configured services, or, when none is, those
// whose flag in the project is named like a default routes flag.
func (a *Actuator) knownServices(ctx context.Context, c *client) ([]string, error) {
	if len(a.cfg.Flags) > 0 {
		return slices.Sorted(maps.Keys(a.cfg.Flags)), nil
	}
	names, err := c.listFeatures(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		if s, ok := strings.CutPrefix(n, "hermes-"); ok {
			if s, ok := strings.CutSuffix(s, "-route"); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func (a *Actuator) currentService(ctx context.Context, c *client, service string) (traffic.Split, bool, error) {
	var st traffic.Split
	fl := a.flags(service)
	f, err := c.getFeature(ctx, fl.Routes)
	if err != nil || f == nil {
		return st, false, err
	}
	env, err := c.environment(f)
	if err != nil {
		return st, false, err
	}
	ours, _ := pick(env.Strategies)
	if !env.Enabled || ours == nil || len(ours.Variants) == 0 {
		return st, false, nil
	}
	st.Weights = weightsOf(ours.Variants)
	st.Writer = stampOf(*ours)
	if st.Degraded, err = a.currentToggle(ctx, c, fl.DegradedMode); err != nil {
		return st, false, err
	}
	if st.RetriesEnabled, err = a.currentToggle(ctx, c, fl.RetriesEnabled); err != nil {
		return st, false, err
	}
	return st, true, nil
}

func (a *Actuator) currentToggle(ctx context.Context, c *client, flag string) (bool, error) {
	if flag == "" {
		return false, nil
	}
	f, err := c.getFeature(ctx, flag)
	if err != nil || f == nil {
		return false, err
	}
	env, err := c.environment(f)
	if err != nil {
		return false, err
	}
	return env.Enabled, nil
}

// splitString renders variants for logs: "free=95% paid=5%".
func splitString(vs []variant) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%s=%g%%", v.Name, float64(v.Weight)/10))
	}
	return strings.Join(parts, " ")
}
