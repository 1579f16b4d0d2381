package evaluator

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// Policy is a validated policy prepared for the core: lookups by name,
// compiled alert rules and the queries of a tick. Build it once per
// (re)load with NewPolicy.
type Policy struct {
	Config  *rules.Policy
	signals map[string]rules.SignalConfig
	levels  [traffic.Manual]rules.LevelConfig // indexed by level; [traffic.Normal] is unused
	alerts  []*alertRule
	// scopeAlerts are the indexes in alerts of each scope's rules, so a
	// target's rules are found without reading every rule.
	scopeAlerts map[string][]int
	routes      []string // every route of every service, in config order
	services    map[string]rules.ServiceConfig
	// actuators are the names of the configured actuators (name, else
	// type), the targets of actuator-scope alert rules.
	actuators []string
	// maxShift is each service's max_shift_per_tick, by service index
	// (shift.go); 0 for none.
	maxShift []int

	// signalIndex is each signal's index in Config.Signals.
	signalIndex map[string]int
	// routeServices are the services of each route, in config order.
	routeServices map[string][]string
	// routeIndex is each route's index in routes; serviceRoutes[i][j] that
	// of the j-th route of Config.Services[i], so a tick adds up each
	// route's share by index.
	routeIndex    map[string]int
	serviceRoutes [][]int
	// shown, decisive and recovery are the bounds of a proportion of
	// calls at scoring.confidence, scoring.decisive_confidence and
	// scoring.recovery_confidence (bounds.go; recovery is shown when the
	// two confidences are one);
	// evidence is each signal's format of evidence texts, without a
	// window (evidence.go), which its contributions point to; scoring the
	// penalties, caps and floors by signal index.
	shown, decisive, recovery *proportionBounds
	// size is where a proven penalty is sized (evidence.go, sizedAt):
	// recovery when scoring.recovery_confidence is set, else nil.
	size     *proportionBounds
	evidence []evidence
	scoring  scoreRules
	// arrivals are what decisive moves read of arriving failures
	// (arrival.go).
	arrivals arrivalRules
	// columns are the snapshot columns the policy reads (rules.Columns):
	// its signals, then their windows; windows[i] are signal i's windows
	// with their columns, ascending.
	columns []string
	windows [][]windowColumn
	// windowed is how many signals have windows.
	windowed int
	// queries are every query a tick sends (rules.Policy.Queries).
	queries []string
}

// windowColumn is one of a signal's longer windows and the index of its
// column among the policy's columns.
type windowColumn struct {
	window time.Duration
	col    int
}

// NewPolicy prepares cfg for the core. cfg must be built by the loader
// (config.Config.Rules), which validates it and derives its windows.
func NewPolicy(cfg *rules.Policy) (*Policy, error) {
	p := &Policy{Config: cfg, signals: map[string]rules.SignalConfig{}, signalIndex: map[string]int{},
		services: map[string]rules.ServiceConfig{}, routeServices: map[string][]string{}}
	p.shown, p.decisive = newProportionBounds(zScore(cfg.Scoring.Confidence)), newProportionBounds(zScore(cfg.Scoring.DecisiveConfidence))
	p.recovery = p.shown
	if rc := cfg.Scoring.RecoveryConfidence; rc != 0 && rc != cfg.Scoring.Confidence {
		p.recovery = newProportionBounds(zScore(rc))
	}
	if cfg.Scoring.RecoveryConfidence != 0 {
		// Without the key a policy sizes on the ratio the calls show,
		// as before (sizedAt with nil).
		p.size = p.recovery
	}
	p.evidence = make([]evidence, len(cfg.Signals))
	for i, s := range cfg.Signals {
		if len(s.Derived.Over) != len(s.Windows) {
			return nil, errors.New("signals[" + strconv.Itoa(i) + "] (" + s.Name + "): its windows' queries were not derived: build the policy with rules/config (config.Config.Rules)")
		}
	}
	for i, s := range cfg.Signals {
		p.signals[s.Name] = s
		p.signalIndex[s.Name] = i
		p.evidence[i] = evidence{evidenceFormat: ptr(newEvidenceFormat(cfg, &cfg.Signals[i], p.shown))}
	}
	p.scoring = newScoreRules(cfg, p.signalIndex)
	p.arrivals = newArrivalRules(cfg, p.scoring.bounds)
	p.columns = rules.Columns(cfg.Signals)
	p.windows = make([][]windowColumn, len(cfg.Signals))
	col := len(cfg.Signals)
	for i, s := range cfg.Signals {
		for _, w := range s.Windows {
			p.windows[i] = append(p.windows[i], windowColumn{window: w, col: col})
			col++
		}
		if len(s.Windows) > 0 {
			p.windowed++
		}
	}
	for _, l := range cfg.Levels {
		lv, err := traffic.ParseLevel(l.Name)
		if err != nil || lv == traffic.Normal || lv >= traffic.Manual {
			return nil, errors.New("levels: unexpected level " + strconv.Quote(l.Name))
		}
		p.levels[lv] = l
	}
	p.routeIndex = map[string]int{}
	for _, svc := range cfg.Services {
		p.services[svc.Name] = svc
		idx := make([]int, len(svc.Routes))
		for j, r := range svc.Routes {
			if !slices.Contains(p.routeServices[r], svc.Name) {
				p.routeServices[r] = append(p.routeServices[r], svc.Name)
			}
			i, ok := p.routeIndex[r]
			if !ok {
				i = len(p.routes)
				p.routeIndex[r] = i
				p.routes = append(p.routes, r)
			}
			idx[j] = i
		}
		p.serviceRoutes = append(p.serviceRoutes, idx)
	}
	p.actuators = cfg.ActuatorNames
	p.queries = cfg.Queries()
	p.maxShift = shiftLimits(cfg)
	for i, a := range cfg.Alerts {
		r, err := compileAlert(a)
		if err != nil {
			return nil, wrap("alerts["+strconv.Itoa(i)+"] ("+a.Name+")", err)
		}
		if p.scopeAlerts == nil {
			p.scopeAlerts = map[string][]int{}
		}
		p.scopeAlerts[r.cfg.Scope] = append(p.scopeAlerts[r.cfg.Scope], len(p.alerts))
		p.alerts = append(p.alerts, r)
	}
	return p, nil
}

// Queries are every PromQL query a tick sends, each signal's
// rules.SignalConfig.TickQuery once, in signal order: made once per policy.
func (p *Policy) Queries() []string { return p.queries }

// Routes returns every route of every service, each once, in config order.
func (p *Policy) Routes() []string { return p.routes }

// level returns the configuration of a degraded level (warm, shed, failover).
func (p *Policy) level(l traffic.Level) rules.LevelConfig { return p.levels[l] }

// Level returns the configuration of a degraded level (warm, shed,
// failover); the zero LevelConfig for others.
func (p *Policy) Level(l traffic.Level) rules.LevelConfig {
	if l < traffic.Normal || l >= traffic.Manual {
		return rules.LevelConfig{}
	}
	return p.levels[l]
}

// primaryPercent is the share a route at level l (and failback stage) keeps.
func (p *Policy) primaryPercent(rs RouteState) int { return p.PrimaryPercent(rs.SavedRoute) }

// PrimaryPercent is the share of what reaches it that a route keeps at its
// level (and failback stage).
func (p *Policy) PrimaryPercent(rs SavedRoute) int { return p.percentAt(rs.Level, rs.Stage) }

// percentAt is PrimaryPercent of a route at level l and failback stage.
func (p *Policy) percentAt(l traffic.Level, stage int) int {
	switch {
	case l == traffic.Normal:
		return 100
	case l == traffic.Manual:
		return 0
	case l == traffic.Failover && stage > 0:
		return p.Config.Failback.Stages[stage-1]
	default:
		return p.levels[l].PrimaryPercent
	}
}
