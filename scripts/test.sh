#!/usr/bin/env bash
# test.sh is the one command that runs every Hermes test on a fresh machine:
# it installs the real servers the integration tests need, checks formatting
# and vet, then runs all Go tests (unit, scenario, integration).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -count=1 -timeout 40m "$@" ./...
# A short fuzz run of the reply validator on top of its committed seed corpus.
go test -run '^$' -fuzz FuzzClassify -fuzztime 10s ./gateway/validate
