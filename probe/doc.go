// Package probe is the synthetic prober behind `hermes probe`: for every
// configured route it runs, each on its own interval, timeout and failure
// threshold,
//
//   - liveness: the API answers HTTP at all (below 500), about every 30s;
//   - readiness: the model is listed (GET {base_url}/models), about every 10s;
//   - e2e: real short inferences from a fixed prompt set (short answer,
//     structured JSON output, long-text summary streamed, multi-turn),
//     judged by gateway/validate, every 1–5 minutes;
//   - boundary: requests with max_tokens, temperature and top_p at their
//     edges, daily, to catch a provider that silently starts refusing them
//     (the 422 surge).
//
// It exports llm_probe_results_total{route,layer,probe,verdict,reason}
// (each result counted once, its series created at 0),
// llm_probe_success{route,probe,layer} (0/1 after the failure threshold,
// for blackbox-exporter compatibility), llm_probe_duration_seconds,
// llm_probe_verdict_total{route,probe,verdict,reason} and
// llm_probe_tokens_total on the
// registry it is given, under names of their own so that probe traffic
// never mixes with the gateway's user traffic; its requests also carry
// the X-Hermes-Probe header, which gateway/instrument does not record. A
// per-route token budget pauses e2e and boundary probes once spent.
//
// One goroutine runs each (route, layer); a tick's check is
//
//	res := p.check(ctx, target, layer)   // HTTP, judged by the validator
//	p.record(target, layer, res, now)    // counters, threshold, gauges, budget
package probe
