#!/usr/bin/env bash
# A damaged journal (truncated mid-write by a disk error, edited by hand) is said, not ignored:
# `status` used to drop its "Set by gpuclk" column silently and `serve` started without a word.
# Each now warns, naming the file and what to do; a write refuses (exit 255) rather than start
# a new journal over settings the old one still records.
source "$(dirname "$0")/lib.sh" "$1"
SOCK="$TEST_TMP/gpuclk.sock"
gpuclk --sim set -i 0 --power-limit 600
expect_exit 0
JOURNAL="$GPUCLK_STATE_DIR/journal.json"
head -c 300 "$JOURNAL" >"$TEST_TMP/cut" && cp "$TEST_TMP/cut" "$JOURNAL"

gpuclk --sim status
LAST_CMD="status with a truncated journal"
expect_exit 0
expect_err "gpuclk: warning: the journal $JOURNAL is unusable"
expect_err "Move it away to start a new journal"

start_serve --sim --socket "$SOCK" serve --listen off || exit 1
LAST_CMD="serve with a truncated journal"
check; grep -q "gpuclk serve: warning: the journal $JOURNAL is unusable" "$TEST_TMP/serve.log" ||
  fail "no warning at start: $(cat "$TEST_TMP/serve.log")"
gpuclk --sim --socket "$SOCK" status
expect_exit 0
expect_err "gpuclk: warning: the journal $JOURNAL is unusable"
stop_serve

gpuclk --sim set -i 1 --power-limit 600
LAST_CMD="set with a truncated journal"
expect_exit 255
expect_err "the journal $JOURNAL is unusable"
finish
