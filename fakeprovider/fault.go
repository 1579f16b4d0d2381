package fakeprovider

import (
	"fmt"
	"strconv"
	"strings"
)

// Fault is what the provider does to a route's requests: Percent of them
// (0 < Percent ≤ 100) are answered as Kind, the others healthily.
type Fault struct {
	Kind    Kind    `json:"kind"`
	Percent float64 `json:"percent"`
}

func (f Fault) String() string {
	return fmt.Sprintf("%s %s%%", f.Kind, strconv.FormatFloat(f.Percent, 'f', -1, 64))
}

// Validate checks the kind and the percentage.
func (f Fault) Validate() error {
	if _, err := ParseKind(string(f.Kind)); err != nil {
		return err
	}
	if !(f.Percent > 0 && f.Percent <= 100) {
		return fmt.Errorf("percent %v out of range (0, 100]", f.Percent)
	}
	return nil
}

// ParsePercent reads "30%", "30" or "0.5%" as a percentage in (0, 100].
func ParsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(v > 0 && v <= 100) {
		return 0, fmt.Errorf("percent %q: want a number in (0, 100], such as 30%%", s)
	}
	return v, nil
}

// picker chooses which requests a fault hits: exactly Percent of them,
// spread evenly (at 30 %, 3 in every 10 consecutive requests), so that a
// lab run and a test see the share they asked for, not a random walk
// around it.
type picker struct{ credit float64 }

// hit reports whether the next request is hit by a fault of pct percent.
func (p *picker) hit(pct float64) bool {
	p.credit += pct / 100
	if p.credit >= 1-1e-9 {
		p.credit--
		return true
	}
	return false
}
