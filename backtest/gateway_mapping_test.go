package backtest_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

// gatewayShape rewrites the contract's series of a scenario into the
// series a gateway exports itself for the same calls: the names and labels
// of its own metrics. route is the route label the shipped mapping gives
// the gateway's series of contract route r.
type gatewayShape struct {
	rules string
	route func(r string) string
	// requests names a call series (one of llm_gateway_requests_total) by
	// the gateway, from its route, code and verdict; calls the gateway
	// cannot tell apart share a name and are summed.
	requests func(r, code, verdict string) labels.Labels
	// bucket names a latency bucket by the gateway.
	bucket func(r, le string) labels.Labels
}

var gatewayShapes = map[string]gatewayShape{
	"litellm": {
		rules: "../rules/prometheus/gateway-litellm.rules.yml",
		route: func(r string) string { return r },
		requests: func(r, code, verdict string) labels.Labels {
			deployment := []string{"requested_model", "chat", "litellm_model_name", "openai/" + r, "model_id", r,
				"api_base", "https://" + r + ".example/v1", "api_provider", "openai", "hashed_api_key", "9e2c4f1a7b", "team", "t-42"}
			if verdict != "hard_fail" {
				// LiteLLM counts every 2xx as a success, a soft fail included.
				return labels.FromStrings(append(deployment, "__name__", "litellm_deployment_success_responses_total")...)
			}
			return labels.FromStrings(append(deployment, "__name__", "litellm_deployment_failure_responses_total",
				"exception_status", code, "exception_class", "Openai.InternalServerError")...)
		},
		bucket: func(r, le string) labels.Labels {
			return labels.FromStrings("__name__", "litellm_llm_api_latency_metric_bucket", "model", "gpt-4o-mini",
				"model_id", r, "requested_model", "chat", "hashed_api_key", "9e2c4f1a7b", "team", "t-42", "le", le)
		},
	},
	"envoy-ai": {
		rules: "../rules/prometheus/gateway-envoy-ai.rules.yml",
		route: func(r string) string { return "openai:" + r },
		requests: func(r, _, verdict string) labels.Labels {
			l := []string{"__name__", "gen_ai_server_request_duration_seconds_count", "gen_ai_operation_name", "chat",
				"gen_ai_provider_name", "openai", "gen_ai_original_model", "chat", "gen_ai_request_model", r,
				"gen_ai_response_model", r + "-2024-07-18", "otel_scope_name", "envoyproxy/ai-gateway"}
			if verdict == "hard_fail" {
				l = append(l, "error_type", "_OTHER")
			}
			return labels.FromStrings(l...)
		},
		bucket: func(r, le string) labels.Labels {
			return labels.FromStrings("__name__", "gen_ai_server_request_duration_seconds_bucket", "gen_ai_operation_name", "chat",
				"gen_ai_provider_name", "openai", "gen_ai_original_model", "chat", "gen_ai_request_model", r,
				"gen_ai_response_model", r+"-2024-07-18", "otel_scope_name", "envoyproxy/ai-gateway", "le", le)
		},
	},
}

// TestGatewayMappingsDecide replays the scenario hard_outage (route free
// answers HTTP 500 to every call from 1h to 1h20) as LiteLLM and Envoy AI
// Gateway would export it, records the contract from their series with the
// shipped mapping rules, and runs both shipped policies on the result. The
// default policy must decide exactly as it does on the contract a gateway
// without content validation would export for the same calls (the soft
// fails counted as ok, as these gateways count them), failing free over at
// 1h; the at-scale policy, on the records of hermes-recording.rules.yml
// built from the mapped series, must decide as the default does.
func TestGatewayMappingsDecide(t *testing.T) {
	raw, err := backtest.ParseFile(filepath.Join(scenarioDir, "hard_outage.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	recording, err := backtest.LoadRecordingRules("../rules/prometheus/hermes-recording.rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, shape := range gatewayShapes {
		t.Run(name, func(t *testing.T) {
			mapping, err := backtest.LoadRecordingRules(shape.rules)
			if err != nil {
				t.Fatal(err)
			}
			rename := func(cfg *config.Config) {
				for i := range cfg.Services {
					for j, r := range cfg.Services[i].Routes {
						cfg.Services[i].Routes[j] = shape.route(r)
					}
				}
			}
			blind, own := gatewaySeries(t, raw, shape)
			want := backtestTimeline(t, testenv.DefaultPolicy(t, rename), blind)
			i := slices.IndexFunc(want.Events, func(e evaluator.Event) bool {
				return e.Type == evaluator.EventLevel && e.Route == shape.route("free") && e.To == "failover"
			})
			if i < 0 {
				t.Fatalf("the blind contract does not fail free over: the comparison holds no decision\n%s", timelineText(t, want))
			}
			t.Logf("%s fails over at %s: %s", shape.route("free"), want.Events[i].Time.UTC().Format("15:04:05"), strings.Join(want.Events[i].Reasons, "; "))

			mapped, err := backtest.Record(context.Background(), own, mapping)
			if err != nil {
				t.Fatal(err)
			}
			got := backtestTimeline(t, testenv.DefaultPolicy(t, rename), mapped)
			if a, b := timelineText(t, want), timelineText(t, got); a != b {
				t.Errorf("default policy on the mapped series:\n%s\nwant, as on the contract itself:\n%s", b, a)
			}

			recorded, err := backtest.Record(context.Background(), own, append(slices.Clone(mapping), recording...))
			if err != nil {
				t.Fatal(err)
			}
			atScale := atScalePolicy(t, rename)
			gotAtScale := backtestTimeline(t, atScale, recorded)
			if _, err := sameDecisions(got, gotAtScale); err != nil {
				t.Errorf("at-scale policy on the mapped series decides differently from the default's: %v\n--- default\n%s\n--- at scale\n%s",
					err, timelineText(t, got), timelineText(t, gotAtScale))
			}
		})
	}
}

// gatewaySeries rewrites f's contract series as shape's gateway exports
// them: blind is the contract a gateway that judges no content would
// export (soft fails counted as ok), with shape's route names; own is the
// gateway's own series for the same calls, with every series that is not
// the contract's (the probes) kept, under shape's route names.
func gatewaySeries(t *testing.T, f *backtest.File, shape gatewayShape) (blind, own *backtest.File) {
	t.Helper()
	blind, own = &backtest.File{Interval: f.Interval}, &backtest.File{Interval: f.Interval}
	blindAt, ownAt := map[string]int{}, map[string]int{}
	add := func(to *backtest.File, at map[string]int, l labels.Labels, samples []backtest.Sample) {
		key := l.String()
		i, ok := at[key]
		if !ok {
			at[key] = len(to.Series)
			to.Series = append(to.Series, backtest.Series{Labels: l, Samples: slices.Clone(samples)})
			return
		}
		sum := to.Series[i].Samples
		if len(sum) != len(samples) {
			t.Fatalf("%s: %d samples, another series of the same name %d", key, len(samples), len(sum))
		}
		for j := range sum {
			if sum[j].T != samples[j].T {
				t.Fatalf("%s: samples at other times than another series of the same name", key)
			}
			sum[j].F += samples[j].F
		}
	}
	for _, s := range f.Series {
		name, r := s.Labels.Get("__name__"), s.Labels.Get("route")
		switch {
		case name == "llm_gateway_requests_total":
			code, verdict := s.Labels.Get("code"), s.Labels.Get("verdict")
			if verdict != "ok" && verdict != "soft_fail" && verdict != "hard_fail" {
				t.Fatalf("scenario series %s: a verdict the conversion does not know", s.Labels)
			}
			if verdict != "hard_fail" {
				code, verdict = "200", "ok"
			}
			add(blind, blindAt, labels.FromStrings("__name__", name, "route", shape.route(r), "code", code, "verdict", verdict), s.Samples)
			add(own, ownAt, shape.requests(r, code, verdict), s.Samples)
		case name == "llm_gateway_request_duration_seconds_bucket":
			le := s.Labels.Get("le")
			add(blind, blindAt, labels.FromStrings("__name__", name, "route", shape.route(r), "le", le), s.Samples)
			add(own, ownAt, shape.bucket(r, le), s.Samples)
		case strings.HasPrefix(name, "llm_gateway_"):
			t.Fatalf("scenario series %s: the conversion does not know it", s.Labels)
		default:
			b := labels.NewBuilder(s.Labels)
			if r != "" {
				b.Set("route", shape.route(r))
			}
			add(blind, blindAt, b.Labels(), s.Samples)
			add(own, ownAt, b.Labels(), s.Samples)
		}
	}
	return blind, own
}

// atScalePolicy is rules/hermes-at-scale.yaml with edit applied.
func atScalePolicy(t *testing.T, edit func(*config.Config)) *evaluator.Policy {
	t.Helper()
	cfg, err := config.Load("../rules/hermes-at-scale.yaml")
	if err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
