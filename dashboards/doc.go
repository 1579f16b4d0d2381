// Package dashboards holds Hermes's Grafana dashboards as JSON, ready to
// import or provision. hermes.json shows the health score and level of each
// route on its first row, then the traffic split per service, the signals'
// values and penalty points, staged failback, and Hermes's own ticks, query
// errors, actuations, and alerts: Hermes's own route, service and actuator
// alerts (from hermes_alert_active_since_timestamp_seconds; Prometheus's
// ALERTS holds none of them) and the watchdog alerts. It reads the metrics
// Hermes exports (hermes_*) through a Prometheus data source chosen with the
// ${datasource} variable, filtered by the $job, $instance, $service and
// $route variables, and aggregates over replicas (max by), so two Hermes
// replicas draw one line per route.
//
// The package has no code: its tests check that every panel queries the
// data source, that every PromQL expression parses, filters by job and
// instance and is aggregated over replicas, and that the first row stays the
// health overview.
package dashboards
