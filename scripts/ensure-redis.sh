#!/usr/bin/env bash
# The shared-store tests (SPEC §9) run against a real redis-server, so `npm ci && npm test` on a fresh
# machine installs the Debian package when it is missing, and stops the run loudly when it cannot.
set -euo pipefail

if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo -n"
else
  echo "ensure-redis: redis-server is not installed and this user cannot install it (not root, no sudo)." >&2
  echo "ensure-redis: install it yourself (Debian/Ubuntu: apt-get install -y redis-server) and run the tests again." >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-redis: redis-server is not installed and apt-get is not available; install redis-server (or valkey-server as redis-server) and run the tests again." >&2
  exit 1
fi

echo "ensure-redis: redis-server not found; installing the Debian package redis-server" >&2
if ! { $sudo apt-get update && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends redis-server; }; then
  echo "ensure-redis: installing redis-server failed; the shared-store tests need it (apt-get install -y redis-server)." >&2
  exit 1
fi

if ! command -v redis-server >/dev/null 2>&1; then
  echo "ensure-redis: redis-server is still not on PATH after installing it." >&2
  exit 1
fi
