#!/usr/bin/env bash
# The README's generated examples (blocks after `<!-- example -->`) still print what the README
# shows: scripts/readme-examples.sh runs each block's commands on a fresh simulated node and fails
# with a diff when the output changed (`scripts/readme-examples.sh --update` rewrites them).
source "$(dirname "$0")/lib.sh" "$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"

LAST_CMD="scripts/readme-examples.sh"
OUT=$("$ROOT/scripts/readme-examples.sh" "$GPUCLK_BIN" "$ROOT/README.md" 2>"$TEST_TMP/err")
RC=$?
ERR=$(cat "$TEST_TMP/err")
expect_exit 0
expect_err "example block(s) checked"
check; ! grep -q "^readme-examples: 0 example" <<<"$ERR" || fail "no example block found in the README"

# A block whose output changed fails with a diff naming it; --update rewrites it.
sed 's/^llm-inference  default  random  none .*/llm-inference  default  random  none   stale numbers/' "$ROOT/README.md" >"$TEST_TMP/README.md"
OUT=$("$ROOT/scripts/readme-examples.sh" "$GPUCLK_BIN" "$TEST_TMP/README.md" 2>"$TEST_TMP/err")
RC=$?
ERR=$(cat "$TEST_TMP/err")
expect_exit 1; expect_out "-llm-inference  default  random  none   stale numbers"; expect_err "--update rewrites them"
"$ROOT/scripts/readme-examples.sh" --update "$GPUCLK_BIN" "$TEST_TMP/README.md" 2>/dev/null
check; cmp -s "$TEST_TMP/README.md" "$ROOT/README.md" || fail "--update did not give back the README: $(diff "$ROOT/README.md" "$TEST_TMP/README.md" | head -20)"

finish
