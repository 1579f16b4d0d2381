// Package lab runs the lab end to end (docs/lab.md): a real `hermes lab
// --fast` with its real Prometheus, Alertmanager and nginx, the fault
// injected and healed with `hermes lab fault` and `hermes lab heal`, every
// step awaited as a condition. TestLabTour is the tour at 12 req/s;
// TestLabThinFailback is issue 33's failback of a 3 req/s service, which
// must start no stage while the route is broken and complete once healed.
//
//	CI=true go test -count=1 -v -timeout 30m ./test/lab/
//
// Outside CI a missing prometheus, prometheus-alertmanager or nginx skips
// the tests; with CI=true it fails them.
package lab
