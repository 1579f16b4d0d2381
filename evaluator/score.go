package evaluator

import (
	"github.com/hermes-failover/hermes/evaluator/traffic"

	"encoding/json"
	"fmt"
	"math"

	"github.com/hermes-failover/hermes/rules"
)

// Contribution is what one signal did to a route's score.
type Contribution struct {
	Signal string  `json:"signal"`
	Value  float64 `json:"value"`
	Status Status  `json:"-"`
	// StatusText is Status as text, for JSON.
	StatusText string `json:"status"`
	Reason     string `json:"reason,omitempty"`
	// Idle: the signal needs user traffic and the route gets none.
	Idle bool `json:"idle,omitempty"`
	// Penalty is the points this signal took off.
	Penalty float64 `json:"penalty"`
	// CapsAt is the score cap this signal imposes, or -1.
	CapsAt float64 `json:"caps_at"`
	// Floor is the level this signal forces at least, normal when none.
	Floor traffic.Level `json:"floor"`
}

// Score is a route's health at one tick, with its per-signal contributions.
type Score struct {
	Value         float64        `json:"value"`
	Contributions []Contribution `json:"contributions"`
	// Missing lists signals whose absence holds the route's level.
	Missing []string `json:"missing,omitempty"`
	// Floor is the strongest level forced by a floor rule.
	Floor traffic.Level `json:"floor"`
	// ImmediateLevel is the level that an immediate cap or floor demands
	// without dwell, normal when none.
	ImmediateLevel traffic.Level `json:"immediate_level"`
	// Carried: signals were missing, so Value is the last score computed
	// with full data (see Step), not one computed from partial data.
	Carried bool `json:"carried,omitempty"`
}

// Held reports whether missing data freezes the route's level upward.
func (s Score) Held() bool { return len(s.Missing) > 0 }

// Reasons explains the score: every penalty, cap, floor and missing signal.
func (s Score) Reasons() []string {
	var out []string
	for _, c := range s.Contributions {
		switch {
		case c.Status != StatusOK:
			continue
		case c.Penalty > 0:
			out = append(out, fmt.Sprintf("%s %s (-%.1f)", c.Signal, fmtValue(c.Value), c.Penalty))
		}
		if c.CapsAt >= 0 {
			out = append(out, fmt.Sprintf("%s %s caps score at %g", c.Signal, fmtValue(c.Value), c.CapsAt))
		}
		if c.Floor > traffic.Normal {
			out = append(out, fmt.Sprintf("%s %s forces at least %s", c.Signal, fmtValue(c.Value), c.Floor))
		}
	}
	for _, m := range s.Missing {
		out = append(out, m+" missing (level held)")
	}
	return out
}

func fmtValue(v float64) string {
	return fmt.Sprintf("%.3g", v)
}

// beyond returns how far v is past the bound, and whether it is past it.
func beyond(b rules.Bound, v float64) (float64, bool) {
	switch {
	case b.Above != nil && v > *b.Above:
		return v - *b.Above, true
	case b.Below != nil && v < *b.Below:
		return *b.Below - v, true
	}
	return 0, false
}

// ComputeScore scores route from snap. idle says the route currently gets no
// user traffic, so signals that need traffic are skipped rather than missing.
func ComputeScore(route string, snap Snapshot, p *Policy, idle bool) Score {
	sc := Score{Value: 100, Contributions: make([]Contribution, 0, len(p.Config.Signals))}
	index := p.signalIndex // Contributions are in p.Config.Signals order
	row := snap.Row(route)
	for _, sig := range p.Config.Signals {
		smp := row.Get(sig.Name)
		c := Contribution{Signal: sig.Name, Value: smp.Value, Status: smp.Status, StatusText: smp.Status.String(), Reason: smp.Reason, CapsAt: -1}
		if smp.Status != StatusOK {
			c.Value = math.NaN()
			switch {
			case sig.RequiresTraffic && idle:
				c.Idle = true
			case sig.Missing != rules.MissingIgnore:
				sc.Missing = append(sc.Missing, sig.Name)
			}
		}
		sc.Contributions = append(sc.Contributions, c)
	}
	usable := func(name string) (*Contribution, bool) {
		i, ok := index[name]
		if !ok {
			return nil, false
		}
		c := &sc.Contributions[i]
		return c, c.Status == StatusOK
	}
	penalty := 0.0
	for _, pen := range p.Config.Scoring.Penalties {
		c, ok := usable(pen.Signal)
		if !ok {
			continue
		}
		if d, past := beyond(pen.Bound, c.Value); past {
			pts := math.Min(d*pen.PointsPerUnit, pen.Max)
			c.Penalty += pts
			penalty += pts
		}
	}
	sc.Value = math.Max(0, 100-penalty)
	for _, cp := range p.Config.Scoring.Caps {
		c, ok := usable(cp.Signal)
		if !ok {
			continue
		}
		if _, past := beyond(cp.Bound, c.Value); !past {
			continue
		}
		if c.CapsAt < 0 || cp.MaxScore < c.CapsAt {
			c.CapsAt = cp.MaxScore
		}
		if cp.MaxScore < sc.Value {
			sc.Value = cp.MaxScore
		}
		if cp.Immediate {
			sc.ImmediateLevel = max(sc.ImmediateLevel, p.levelForScore(cp.MaxScore))
		}
	}
	for _, fl := range p.Config.Scoring.Floors {
		c, ok := usable(fl.Signal)
		if !ok {
			continue
		}
		if _, past := beyond(fl.Bound, c.Value); !past {
			continue
		}
		lv, err := traffic.ParseLevel(fl.Level)
		if err != nil {
			continue // Validate rejects unknown levels.
		}
		c.Floor = max(c.Floor, lv)
		sc.Floor = max(sc.Floor, lv)
		if fl.Immediate {
			sc.ImmediateLevel = max(sc.ImmediateLevel, lv)
		}
	}
	return sc
}

// levelForScore is the most severe level whose threshold score is below.
func (p *Policy) levelForScore(score float64) traffic.Level {
	for l := traffic.Failover; l >= traffic.Warm; l-- {
		if score < p.levels[l].Below {
			return l
		}
	}
	return traffic.Normal
}

// contributionJSON is Contribution with a nullable value: JSON has no NaN.
type contributionJSON struct {
	Signal     string        `json:"signal"`
	Value      *float64      `json:"value"`
	StatusText string        `json:"status"`
	Reason     string        `json:"reason,omitempty"`
	Idle       bool          `json:"idle,omitempty"`
	Penalty    float64       `json:"penalty"`
	CapsAt     float64       `json:"caps_at"`
	Floor      traffic.Level `json:"floor"`
}

// MarshalJSON writes a value that is not a number as null.
func (c Contribution) MarshalJSON() ([]byte, error) {
	j := contributionJSON{Signal: c.Signal, StatusText: c.Status.String(), Reason: c.Reason, Idle: c.Idle, Penalty: c.Penalty, CapsAt: c.CapsAt, Floor: c.Floor}
	if !math.IsNaN(c.Value) && !math.IsInf(c.Value, 0) {
		j.Value = &c.Value
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads null as NaN.
func (c *Contribution) UnmarshalJSON(b []byte) error {
	var j contributionJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Contribution{Signal: j.Signal, Value: math.NaN(), StatusText: j.StatusText, Reason: j.Reason, Idle: j.Idle, Penalty: j.Penalty, CapsAt: j.CapsAt, Floor: j.Floor}
	if j.Value != nil {
		c.Value = *j.Value
	}
	switch j.StatusText {
	case "missing":
		c.Status = StatusMissing
	case "error":
		c.Status = StatusError
	}
	return nil
}
