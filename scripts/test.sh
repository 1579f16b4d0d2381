#!/usr/bin/env bash
# test.sh is the one command that runs every Hermes test on a fresh machine:
# it installs the real servers the integration tests need, checks formatting
# and vet, runs all Go tests (unit, scenario, integration), then the race
# detector on the packages with goroutines and a short run of each fuzz
# test (its seed corpus, under testdata/fuzz, runs with the plain tests).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
go vet ./...
go test -count=1 -timeout 40m "$@" ./...
go test -race -count=1 -timeout 20m ./evaluator ./runner ./web ./actuators ./proxy ./gateway/...
# The fuzzer minimizes every input that finds new code (60 s by default)
# and reports no executions meanwhile; a valid policy costs ~10 ms to parse,
# so an unbounded minimization used the whole short run and looked like a
# stall. Minimizing 50 executions keeps the run fuzzing.
# Budgets are counts of executions, not durations: with a duration, Go's
# fuzzing coordinator can report "context deadline exceeded" as a failure
# when a worker is mid-execution at the deadline on a loaded machine (a
# race in the toolchain, golang/go#75804), with no input to reproduce.
for fuzz in rules:FuzzParse backtest:FuzzParse backtest:FuzzSeriesDesc promapi:FuzzDecodeAnswer promapi:FuzzScanValid web:FuzzAdminBodies web:FuzzDrillBody gateway/validate:FuzzValidJSON gateway/validate:FuzzUnquote gateway/validate:FuzzReply gateway/validate:FuzzIsEventStream gateway/validate:FuzzCoded gateway/validate:FuzzMaxTokens; do
  go test -run '^$' -fuzz "^${fuzz#*:}\$" -fuzztime "${FUZZTIME:-5000x}" -fuzzminimizetime 50x "./${fuzz%%:*}"
done
# A short fuzz run of the reply validator on top of its committed seed corpus.
go test -run '^$' -fuzz FuzzClassify -fuzztime "${FUZZCLASSIFY:-100000x}" ./gateway/validate
