#!/bin/sh
# Launches Temporal's Java time-skipping test server as `<this script> <port> [args]`, the way
# @temporalio/testing runs an `existing-path` executable. The jars come from pom.xml beside it.
jars="$(cd "$(dirname "$0")/../.." && pwd)/.tools/temporal-test-server"
if [ ! -f "$jars/temporal-test-server-1.38.0.jar" ]; then
  echo "Temporal test server jars missing in $jars: run mvn -q -f test/time-skipping/pom.xml dependency:copy-dependencies" >&2
  exit 1
fi
exec java -XX:+UseSerialGC -Xss512k -cp "$jars/*" io.temporal.testserver.TestServer "$@"
