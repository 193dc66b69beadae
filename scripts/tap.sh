#!/usr/bin/env bash
# The suite under tap's terse reporter (package.json "tap".reporter): a failure in full (its diff,
# source and stack), passes only as counts. Without a terminal (CI, a pipe, a log file) only the
# reporter's final frame is written, not every progress frame it redraws on a terminal. TAP_REPORTER
# or `npx tap --reporter=tap` gives every assertion again.
[ -t 1 ] || export CI=true
exec tap ${TAP_REPORTER:+--reporter="$TAP_REPORTER"} "$@"
