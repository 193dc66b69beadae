#!/usr/bin/env bash
# Programs the tests run for real, installed from Debian's packages when missing, so `npm ci && npm test`
# works on a fresh machine and stops loudly when it cannot:
# - redis-server: the shared-store tests (SPEC §9) and the Redis inbox (SPEC §10);
# - strace: the SQLite inbox's sync test reads which commits reach the disk from the system calls;
# - chromium: the console's browser tests (test/console/browser.test.ts, through playwright-core).
set -euo pipefail

# command package
TOOLS=("redis-server redis-server" "strace strace" "chromium chromium")
find_missing () {
  missing=()
  for tool in "${TOOLS[@]}"; do
    read -r command package <<<"$tool"
    command -v "$command" >/dev/null 2>&1 || missing+=("$package")
  done
}
find_missing
[ "${#missing[@]}" -eq 0 ] && exit 0

# Two test runs on one fresh machine (two checkouts, or CI beside a person) would both install, and the second
# apt-get would fail on the first one's lock: the runs take turns, and the second finds the packages there.
if command -v flock >/dev/null 2>&1; then
  exec 9>"${TMPDIR:-/tmp}/payments-auth-proxy-test-tools.lock"
  flock 9
  find_missing
  [ "${#missing[@]}" -eq 0 ] && exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1; then
  sudo="sudo -n"
else
  echo "ensure-test-tools: ${missing[*]} not installed and this user cannot install them (not root, no sudo)." >&2
  echo "ensure-test-tools: install them yourself (Debian/Ubuntu: apt-get install -y ${missing[*]}) and run the tests again." >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-test-tools: ${missing[*]} not installed and apt-get is not available; install them (valkey-server as redis-server will do) and run the tests again." >&2
  exit 1
fi

echo "ensure-test-tools: installing the Debian packages ${missing[*]}" >&2
# Another program's apt-get (an unattended upgrade) holds the same locks for a while: waited for, not failed on.
wait_locks=(-o DPkg::Lock::Timeout=300)
if ! { $sudo apt-get "${wait_locks[@]}" update &&
  DEBIAN_FRONTEND=noninteractive $sudo apt-get "${wait_locks[@]}" install -y --no-install-recommends "${missing[@]}"; }; then
  echo "ensure-test-tools: installing ${missing[*]} failed; the tests need them (apt-get install -y ${missing[*]})." >&2
  exit 1
fi

for tool in "${TOOLS[@]}"; do
  read -r command package <<<"$tool"
  if ! command -v "$command" >/dev/null 2>&1; then
    echo "ensure-test-tools: $command is still not on PATH after installing $package." >&2
    exit 1
  fi
done
