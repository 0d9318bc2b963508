#!/usr/bin/env bash
# Run by `npm test` (the `pretest` script) before the suites: finds, or installs with apt when it
# can, what the browser and time-skipping suites need beyond Node and Python:
#   Chromium        the MCP sign-in and console journeys (playwright-core drives it)
#   Java 17, Maven  Temporal's time-skipping test server, fetched from Maven Central
#   Prometheus      promtool checks the alert rules; a real Prometheus scrapes Herald (e2e/metrics)
#   jq              the README's quickstart, run as written (e2e/readme-quickstart)
# Without root or apt it names the one command to run, and stops.
set -euo pipefail
cd "$(dirname "$0")/.."

missing_packages=()
chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$chromium" ] || missing_packages+=(chromium)
command -v java >/dev/null || missing_packages+=(openjdk-17-jre-headless)
# The README's quickstart (run by e2e/readme-quickstart) reads answers with jq.
command -v jq >/dev/null || missing_packages+=(jq)
command -v promtool >/dev/null && command -v prometheus >/dev/null || missing_packages+=(prometheus)
ls .tools/temporal-test-server/temporal-test-server-*.jar >/dev/null 2>&1 ||
  command -v mvn >/dev/null || missing_packages+=(maven)

if [ ${#missing_packages[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "npm test needs these packages: ${missing_packages[*]}. Install them first, for example" >&2
    echo "  sudo apt-get install -y ${missing_packages[*]}" >&2
    echo "(or set CHROMIUM_PATH to a Chromium or Chrome executable)." >&2
    exit 1
  fi
  echo "Installing ${missing_packages[*]} with apt-get (needed by the browser and time-skipping suites)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q "${missing_packages[@]}" ||
    { apt-get update -q && apt-get install -y -q "${missing_packages[@]}"; }
fi

ls .tools/temporal-test-server/temporal-test-server-*.jar >/dev/null 2>&1 ||
  scripts/fetch-temporal-test-server.sh
scripts/install-helm.sh
scripts/install-jaeger.sh
scripts/install-mcp-clients.sh
