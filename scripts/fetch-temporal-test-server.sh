#!/usr/bin/env bash
# Fetches Temporal's Java time-skipping test server and its dependencies from Maven Central into
# .tools/temporal-test-server/ (git-ignored), pinned by test/time-skipping/pom.xml. Needs Java 17+
# and Maven. test/time-skipping/temporal-test-server.sh runs it for @temporalio/testing.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -f test/time-skipping/pom.xml dependency:copy-dependencies
ls .tools/temporal-test-server/temporal-test-server-*.jar
