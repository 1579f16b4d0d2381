// Package deploy holds what installs Hermes on a host: hermes.service, a
// systemd unit for `hermes run`, and prometheus.yml, the scrape jobs of
// Hermes and its prober and Hermes's rule files for Prometheus. It has no
// code: its tests check the unit with `systemd-analyze verify` and `hermes
// run`'s own flag parsing, and the Prometheus example with `promtool check
// config` against the shipped rule files.
package deploy
