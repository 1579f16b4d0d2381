package detect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
)

// Scenario runs every method on the scenario file at path and scores them.
// The service's routes are pol's first service's, in priority order.
func Scenario(ctx context.Context, pol *evaluator.Policy, path string) ([]Outcome, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	outs, err := Data(ctx, pol, strings.TrimSuffix(filepath.Base(path), ".yaml"), data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return outs, nil
}

// Data is Scenario for the scenario file's contents, data, named name.
func Data(ctx context.Context, pol *evaluator.Policy, name string, data []byte) ([]Outcome, error) {
	truth, err := ParseTruth(data)
	if err != nil {
		return nil, err
	}
	f, err := backtest.Parse(data)
	if err != nil {
		return nil, err
	}
	bt, err := backtest.Open(f)
	if err != nil {
		return nil, err
	}
	defer bt.Close()
	if len(pol.Config.Services) == 0 {
		return nil, fmt.Errorf("the policy has no service")
	}
	svc := pol.Config.Services[0]
	methods := []struct {
		name string
		run  func() ([]Tick, error)
	}{
		{MethodHermes, func() ([]Tick, error) { return Hermes(ctx, pol, bt, svc.Name) }},
		{MethodClassic, func() ([]Tick, error) { return Classic(ctx, bt, svc.Routes) }},
		{MethodEnvoy, func() ([]Tick, error) { return Envoy(ctx, bt, svc.Routes) }},
		{MethodLiteLLM, func() ([]Tick, error) { return LiteLLM(ctx, bt, svc.Routes) }},
	}
	var outs []Outcome
	for _, m := range methods {
		ticks, err := m.run()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", name, m.name, err)
		}
		outs = append(outs, Score(name, m.name, ticks, bt.Step(), truth, svc.Routes))
	}
	return outs, nil
}
