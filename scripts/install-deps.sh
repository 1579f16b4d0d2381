#!/usr/bin/env bash
# install-deps.sh installs the real servers the integration tests start, when
# they are missing: Debian packages only (run as root, or with sudo).
set -euo pipefail

# command → Debian package
declare -A want=(
  [prometheus]=prometheus
  [promtool]=prometheus
  [victoria-metrics]=victoria-metrics
)

missing=()
for cmd in "${!want[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
echo "install-deps: installing $pkgs"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
# Debian starts packaged daemons where it can; the tests start their own.
for svc in prometheus victoria-metrics; do
  $sudo systemctl stop "$svc" >/dev/null 2>&1 || true
done
