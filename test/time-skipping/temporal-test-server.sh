#!/bin/sh
# Launches Temporal's Java time-skipping test server as `<this script> <port> [args]`, the way
# @temporalio/testing runs an `existing-path` executable. scripts/fetch-temporal-test-server.sh
# puts the jars (pom.xml beside this file) in .tools/temporal-test-server/.
jars="$(cd "$(dirname "$0")/../.." && pwd)/.tools/temporal-test-server"
if ! ls "$jars"/temporal-test-server-*.jar >/dev/null 2>&1; then
  echo "Temporal test server jars missing in $jars: run scripts/fetch-temporal-test-server.sh" >&2
  exit 1
fi
exec java -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$jars/*" io.temporal.testserver.TestServer "$@"
