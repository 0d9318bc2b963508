#!/usr/bin/env bash
# Builds Jaeger (all-in-one: OTLP receiver and query API in one process) from its Go module into
# .tools/jaeger/, for the tracing test (test/e2e/tracing.test.ts). Skips when already built.
# Needs Go (PATH, or /usr/local/go/bin/go); GOTOOLCHAIN lets an older Go fetch the one Jaeger wants.
set -euo pipefail
cd "$(dirname "$0")/.."
# One build at a time: .ci/run starts this in the background, and the test command's pretest
# then waits here for it rather than building a second copy.
mkdir -p .tools
exec 9>.tools/jaeger.lock
flock 9

jaeger_version=v1.76.0
target=.tools/jaeger/jaeger
[ -x "$target" ] && exit 0

go_binary="$(command -v go || echo /usr/local/go/bin/go)"
if [ ! -x "$go_binary" ]; then
  echo "The tracing test needs Jaeger, built with Go: install Go (https://go.dev/dl/) and rerun $0" >&2
  exit 1
fi
echo "Building Jaeger $jaeger_version from its Go module into .tools/jaeger (takes minutes)"
# Jaeger's go.mod has replace directives, which `go install module@version` refuses: build inside
# the downloaded module instead, so its go.mod (and go.sum) decide every dependency.
module_dir="$(GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" "$go_binary" mod download -json \
  "github.com/jaegertracing/jaeger@$jaeger_version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
mkdir -p .tools/jaeger
output="$PWD/$target"
(cd "$module_dir" && GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" GOFLAGS=-mod=mod \
  nice "$go_binary" build -trimpath -o "$output.partial" ./cmd/jaeger)
mv "$output.partial" "$output"
