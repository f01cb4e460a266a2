#!/usr/bin/env bash
# /metrics's series budget: by default at most 40 series per GPU on the simulated 8x H100 and
# 2x H200 nodes (perf/metrics_budget.sh counts them family by family, by default and with each
# --metrics-detail group), and docs/exporter.md's table is what the count gives now (the
# node-level row aside: findings and users come and go). --metrics-detail's values are checked.
source "$(dirname "$0")/lib.sh" "$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
command -v curl >/dev/null || { echo "SKIP: curl not installed"; exit 77; }

"$ROOT/perf/metrics_budget.sh" "$GPUCLK_BIN" >"$TEST_TMP/table.md" 2>"$TEST_TMP/budget.err"
RC=$?
LAST_CMD="perf/metrics_budget.sh"
OUT=$(cat "$TEST_TMP/table.md")
ERR=$(cat "$TEST_TMP/budget.err")
expect_exit 0
expect_out_re '^\| \*\*series per GPU\*\* \(budget 40\) \| \*\*([1-3][0-9]|40) / ([1-3][0-9]|40)\*\*'
# The docs' table, between its markers, without the node-level row.
sed -n '/<!-- metrics-budget begin -->/,/<!-- metrics-budget end -->/p' "$ROOT/docs/exporter.md" |
  grep '^|' | grep -v '^| node-level' >"$TEST_TMP/doc.md"
grep -v '^| node-level' "$TEST_TMP/table.md" >"$TEST_TMP/now.md"
check; diff "$TEST_TMP/doc.md" "$TEST_TMP/now.md" >"$TEST_TMP/diff.txt" ||
  fail "docs/exporter.md's series table differs from perf/metrics_budget.sh's count (update the docs with its output):
$(cat "$TEST_TMP/diff.txt")"

# --metrics-detail: a list of groups; anything else is exit 2, before anything starts.
gpuclk --sim 2xh200 serve --listen 127.0.0.1:0 --metrics-detail nvlink,bogus
expect_exit 2
expect_err "bad --metrics-detail 'bogus'"
expect_err "nvlink, gpu, attribution, all and none"

finish
