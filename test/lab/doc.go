// Package lab runs the lab's tour (docs/lab.md) end to end: a real
// `hermes lab --fast` with its real Prometheus, Alertmanager and nginx,
// the fault injected and healed with `hermes lab fault` and `hermes lab
// heal`, every step awaited as a condition.
//
//	CI=true go test -count=1 -v -timeout 20m ./test/lab/
//
// Outside CI a missing prometheus, prometheus-alertmanager or nginx skips
// the test; with CI=true it fails it.
package lab
