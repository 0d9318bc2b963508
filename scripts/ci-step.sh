#!/usr/bin/env bash
# Runs one CI step with its output in .ci/logs/<name>.log, and prints one line when it passes or
# the log's last 200 lines when it fails, so the README's test command owns the CI log.
# Usage: scripts/ci-step.sh <name> <command> [args...]
set -uo pipefail
name=$1
shift
mkdir -p .ci/logs
log=".ci/logs/$name.log"
started=$SECONDS
"$@" >"$log" 2>&1
status=$?
if [ "$status" -eq 0 ]; then
  echo "CI step '$name' passed in $((SECONDS - started)) s (output: $log)"
else
  echo "CI step '$name' failed with exit $status after $((SECONDS - started)) s; the end of $log:"
  tail -n 200 "$log"
fi
exit "$status"
