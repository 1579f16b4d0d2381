// Package deploy holds what installs Hermes on a host: hermes.service, a
// systemd unit for `hermes run`, hermes-probe.service and
// hermes-proxy.service for the prober and the proxy, and prometheus.yml,
// the scrape jobs of Hermes, its prober and its proxy and Hermes's rule
// files for Prometheus. It has no code: its tests check the units with
// `systemd-analyze verify` and by running their command lines, and the
// Prometheus example with `promtool check config` against the shipped rule
// files.
package deploy
