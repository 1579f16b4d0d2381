// Package integration runs Hermes end to end against real processes on
// 127.0.0.1: a test LLM gateway exporter (in the test process), a real
// Prometheus or VictoriaMetrics scraping it and Hermes, and a real
// `hermes run` with the file actuator. Every server is stopped by its PID
// at the end of its test.
//
//	CI=true go test -count=1 -v -timeout 20m ./test/integration/
//
// Outside CI a missing prometheus or victoria-metrics binary skips the
// tests that need it; with CI=true it fails them.
package integration
