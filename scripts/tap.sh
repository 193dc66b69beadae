#!/usr/bin/env bash
# The suite under tap's base reporter (package.json "tap".reporter): a line per test file as it
# finishes (PASS or FAIL, its counts and time), then every failure in full (its diff, source and
# stack) and the totals; in a terminal it also shows the files running. Without a terminal (CI, a
# pipe, a log file) CI=true makes its renderer (ink) append those lines as they come and write the
# rest once at the end, instead of redrawing frames a log cannot erase. tap's exit code is the
# script's. TAP_REPORTER (e.g. tap, terse) chooses another reporter: `tap` gives every assertion.
[ -t 1 ] || export CI=true
exec tap ${TAP_REPORTER:+--reporter="$TAP_REPORTER"} "$@"
