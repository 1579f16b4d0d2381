package runner

import (
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/actuation"
	"github.com/hermes-failover/hermes/runner/alerting"
)

// View is a consistent copy of what the live loop holds, in the core's own
// types: the status page (package web) builds its wire types from it. The
// configuration, policy and state it holds are never written in place by
// the loop (a tick or a reload replaces them), so a View stays valid after
// the loop moves on.
type View struct {
	// Ticked is set by the first tick, Ready by the first tick that had
	// data (see Runner.Ready).
	Ticked, Ready bool
	LastTick      time.Time
	ConfigFile    string
	LoadedAt      time.Time
	Config        *config.Config
	Policy        *evaluator.Policy
	State         evaluator.State
	// Actuators is each actuator's last outcome, by name.
	Actuators []ActuatorOutcome
	// SignalProblems are the last tick's failed signal queries, by signal
	// and reason.
	SignalProblems []SignalProblem
	// AlertErrors are the last run-time failure of each alert expression
	// that failed, by alert name.
	AlertErrors []AlertError
	// ReloadFailure is the last rejected reload since the last good one
	// (nil when the last reload succeeded): the configuration of LoadedAt
	// keeps running.
	ReloadFailure *ReloadFailure
	// Candidate is the candidate policy evaluated beside the live one
	// (--candidate.file); nil without one.
	Candidate *CandidateView
	// Held are the services the last tick wrote to no backend, with why:
	// HeldNoData, HeldUnknownSplit or HeldReplicasDisagree (the reason
	// label of hermes_service_actuation_held).
	Held map[string]string
	// UnknownSplits are the services whose split no backend could say at
	// the restart and that no tick has decided on data since. A pin, or a
	// pause that froze a split, gives the split meanwhile (SplitUnknown
	// says whether one does); once it ends the service is held again.
	UnknownSplits map[string]bool
}

// The reasons of View.Held: why the actuation stage wrote a service to
// no backend (runner/actuation's withheld.go has the long form).
const (
	// HeldNoData: every signal query of the tick failed.
	HeldNoData = actuation.WithheldNoData
	// HeldUnknownSplit: Hermes does not know the split (View.SplitUnknown).
	HeldUnknownSplit = actuation.WithheldUnknownSplit
	// HeldReplicasDisagree: another replica has a live lease on the
	// backend and wrote a different split.
	HeldReplicasDisagree = actuation.WithheldReplicasDisagree
)

// SplitUnknown reports whether Hermes does not know service svc's split
// now: the restart could not learn it, no tick has decided it on data
// since, and no pin or frozen pause gives it. The core's split of svc is
// then a placeholder (its first route at 100 %), which Hermes does not
// write: the backends keep what they hold.
func (v View) SplitUnknown(svc string) bool {
	o, ok := v.State.Overrides[svc]
	return v.UnknownSplits[svc] && !actuation.OperatorSplit(o, ok)
}

// ActuatorOutcome is the last outcome of one actuator's apply.
type ActuatorOutcome = actuation.Outcome

// AlertError is the last run-time failure of one alert rule's expression,
// as the alerting stage keeps it.
type AlertError = alerting.AlertError

// View returns a consistent copy of the current state.
func (r *Runner) View() View {
	r.mu.Lock()
	v := View{Ticked: r.status.ticked.Load(), Ready: r.status.ready.Load(), LastTick: r.lastTick, ConfigFile: r.opts.ConfigPath,
		LoadedAt: r.loadedAt, Config: r.cfg, Policy: r.pol, State: r.state, SignalProblems: r.problems}
	r.mu.Unlock()
	v.Actuators = r.stages.actuation.Outcomes()
	v.AlertErrors = r.stages.alerting.LastErrors(v.Config)
	v.ReloadFailure = r.reloads.lastFailure()
	v.Candidate = r.stages.shadow.view()
	v.Held, v.UnknownSplits = r.stages.actuation.Withheld()
	return v
}

// ActiveAlerts returns the pending and firing alerts of v, by tier, then
// name and labels.
func (v View) ActiveAlerts() []*evaluator.Alert {
	var out []*evaluator.Alert
	for _, a := range v.State.Alerts {
		if a.Active() {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *evaluator.Alert) int {
		if a.Tier != b.Tier {
			return strings.Compare(a.Tier, b.Tier)
		}
		return strings.Compare(a.Rule+a.Service+a.Route+a.Actuator, b.Rule+b.Service+b.Route+b.Actuator)
	})
	return out
}
