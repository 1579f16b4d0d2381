#!/usr/bin/env bash
# install-deps.sh installs the real servers the integration tests start, when
# they are missing: Debian packages (apt-get), and from npm unleash-server
# and the OpenAI and Anthropic SDKs for Node (the proxy's tests with real
# JavaScript clients).
# It needs root (or sudo). Nothing is started here: each test starts its own
# servers on 127.0.0.1 and stops them by PID.
set -euo pipefail

# Where unleash-server is installed (the Unleash actuator test reads the same
# variable, with the same default).
UNLEASH_DIR=${HERMES_UNLEASH_DIR:-/var/cache/hermes-test/unleash-server}
UNLEASH_VERSION=7.5.1
# Where the OpenAI SDK for Node is installed (test/proxy reads the same
# variable, with the same default).
OPENAI_NODE_DIR=${HERMES_OPENAI_NODE_DIR:-/var/cache/hermes-test/openai-node}
OPENAI_NODE_VERSION=7.60.0
# Where Anthropic's SDK for Node is installed (test/proxy reads the same
# variable, with the same default).
ANTHROPIC_NODE_DIR=${HERMES_ANTHROPIC_NODE_DIR:-/var/cache/hermes-test/anthropic-node}
ANTHROPIC_NODE_VERSION=1.17.0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"

# command (or file) → Debian package
declare -A want=(
  [prometheus]=prometheus
  [promtool]=prometheus
  [victoria-metrics]=victoria-metrics
  [prometheus-alertmanager]=prometheus-alertmanager
  [amtool]=prometheus-alertmanager
  [nginx]=nginx
  [knotd]=knot
  [knotc]=knot
  [/usr/lib/postgresql/15/bin/initdb]=postgresql
  [node]=nodejs
  [npm]=npm
  [chromium]=chromium
  [systemd-analyze]=systemd
  [curl]=curl
)

missing=()
for cmd in "${!want[@]}"; do
  if [[ $cmd == /* ]]; then
    [ -x "$cmd" ] || missing+=("${want[$cmd]}")
  else
    command -v "$cmd" >/dev/null 2>&1 || missing+=("${want[$cmd]}")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  pkgs=$(printf '%s\n' "${missing[@]}" | sort -u | tr '\n' ' ')
  echo "install-deps: installing $pkgs"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
  # Debian may start packaged daemons; the tests start their own.
  for svc in prometheus victoria-metrics prometheus-alertmanager nginx knot postgresql; do
    $sudo systemctl stop "$svc" >/dev/null 2>&1 || $sudo service "$svc" stop >/dev/null 2>&1 || true
  done
fi

if [ ! -f "$UNLEASH_DIR/node_modules/unleash-server/package.json" ] ||
   ! grep -q "\"version\": \"$UNLEASH_VERSION\"" "$UNLEASH_DIR/node_modules/unleash-server/package.json"; then
  echo "install-deps: installing unleash-server@$UNLEASH_VERSION into $UNLEASH_DIR"
  $sudo mkdir -p "$UNLEASH_DIR"
  (cd "$UNLEASH_DIR" && $sudo npm install --no-audit --no-fund --loglevel=error "unleash-server@$UNLEASH_VERSION" >/dev/null)
fi

if [ ! -f "$OPENAI_NODE_DIR/node_modules/openai/package.json" ] ||
   ! grep -q "\"version\": \"$OPENAI_NODE_VERSION\"" "$OPENAI_NODE_DIR/node_modules/openai/package.json"; then
  echo "install-deps: installing openai@$OPENAI_NODE_VERSION (the OpenAI SDK for Node) into $OPENAI_NODE_DIR"
  $sudo mkdir -p "$OPENAI_NODE_DIR"
  (cd "$OPENAI_NODE_DIR" && $sudo npm install --no-audit --no-fund --loglevel=error "openai@$OPENAI_NODE_VERSION" >/dev/null)
fi

if [ ! -f "$ANTHROPIC_NODE_DIR/node_modules/@anthropic-ai/sdk/package.json" ] ||
   ! grep -q "\"version\": \"$ANTHROPIC_NODE_VERSION\"" "$ANTHROPIC_NODE_DIR/node_modules/@anthropic-ai/sdk/package.json"; then
  echo "install-deps: installing @anthropic-ai/sdk@$ANTHROPIC_NODE_VERSION (Anthropic's SDK for Node) into $ANTHROPIC_NODE_DIR"
  $sudo mkdir -p "$ANTHROPIC_NODE_DIR"
  (cd "$ANTHROPIC_NODE_DIR" && $sudo npm install --no-audit --no-fund --loglevel=error "@anthropic-ai/sdk@$ANTHROPIC_NODE_VERSION" >/dev/null)
fi
