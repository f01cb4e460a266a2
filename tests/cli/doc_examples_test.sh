#!/usr/bin/env bash
# scripts/doc-examples.py, which generates and checks every example of README.md and docs/*.md
# (ctest docs.examples runs it on them), on small documents of its own: a stale figure fails with
# a diff naming the block and --update rewrites it; in an example with a tolerance a figure within
# it passes and one beyond it fails (295 W where the command gives more); lines left out of the
# comparison (`vary=`); excerpts (`lines=`),
# a block continuing the previous one's node, a background command, quotes of recorded output, an
# example a test records (--recorded), and blocks that are neither examples nor marked as
# something else. Then the README's list of simulator scenarios against the scenarios --sim knows.
source "$(dirname "$0")/lib.sh" "$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
D="$TEST_TMP/docs"
mkdir -p "$D"

# docs FILE...: the checker on FILE (stdout in $OUT, stderr in $ERR, exit code in $RC).
docs() {
  LAST_CMD="doc-examples.py $*"
  OUT=$(python3 "$ROOT/scripts/doc-examples.py" --bin "$GPUCLK_BIN" "$@" 2>"$TEST_TMP/err")
  RC=$?
  ERR=$(cat "$TEST_TMP/err")
}

# --- an exact example: written by --update, then checked; a changed figure fails ---
FENCE='```'
cat >"$D/exact.md" <<EOF
Power of GPU 0, frozen 45 s after power-on:

<!-- example -->
$FENCE
\$ GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=45 gpuclk --sim dmon -c 1 -s p -i 0
$FENCE
EOF
docs --update "$D/exact.md"
expect_exit 0; expect_err "exact.md:4: updated"
W=$(GPUCLK_SIM_STATE="$TEST_TMP/w.state" GPUCLK_SIM_SPEED=0 GPUCLK_SIM_START=45 \
  "$GPUCLK_BIN" --sim query -i 0 --fields power.draw --format csv,noheader,nounits)
W=$(printf '%.0f' "$W")
check; grep -qE "^ +0 +$W " "$D/exact.md" || fail "--update did not write dmon's $W W: $(cat "$D/exact.md")"
docs "$D/exact.md"
expect_exit 0; expect_err "exact.md: 1 example(s) run"
cp "$D/exact.md" "$D/exact.orig"
sed -i -E "s/^( +0 +)$W /\\1295 /" "$D/exact.md"
docs "$D/exact.md"
expect_exit 1; expect_out "exact.md:4 (as written)"; expect_out "-    0    295 "; expect_out "+    0    $W "
expect_err "--update rewrites the examples"
docs --update "$D/exact.md"
check; cmp -s "$D/exact.md" "$D/exact.orig" || fail "--update did not give the block back: $(diff "$D/exact.orig" "$D/exact.md")"

# --- a tolerance: within it passes (and --update keeps the written figure), beyond it fails ---
near=$((W * 102 / 100))
sed -e 's/^<!-- example -->$/<!-- example tolerance=3% -->/' -E -e "s/^( +0 +)$W /\\1$near /" \
  "$D/exact.orig" >"$D/tolerance.md"
docs --update "$D/tolerance.md"
expect_exit 0; check; grep -qE "^ +0 +$near " "$D/tolerance.md" || fail "--update rewrote a figure within the tolerance"
sed -i -E "s/^( +0 +)$near /\\1295 /" "$D/tolerance.md"
docs "$D/tolerance.md"
expect_exit 1; expect_out "-    0    295 "

# --- vary=: lines whose number varies (a screen's graph rows) are left out of the comparison on
# both sides; the block keeps them as written, and the other lines still count ---
cat >"$D/vary.md" <<EOF
<!-- example vary=/^row/ -->
$FENCE
\$ printf 'head\\nrow 1\\nrow 2\\ntail\\n'
head
row 1
tail
$FENCE
EOF
cp "$D/vary.md" "$D/vary.orig"
docs "$D/vary.md"
expect_exit 0; expect_err "vary.md: 1 example(s) run"
check; cmp -s "$D/vary.md" "$D/vary.orig" || fail "a passing check changed the block"
sed -e 's| vary=/^row/ | |' "$D/vary.orig" >"$D/novary.md"
docs "$D/novary.md"
expect_exit 1; expect_out "+row 2"
sed -e 's/^tail$/TAIL/' "$D/vary.orig" >"$D/vary.md"
docs "$D/vary.md"
expect_exit 1; expect_out "-TAIL"

# --- an excerpt; a block on the node of the one before; a background command's output ---
cat >"$D/flow.md" <<EOF
<!-- example lines=1-2,\$ -->
$FENCE
\$ gpuclk --sim set --power-limit 600
$FENCE

<!-- example continues -->
$FENCE
\$ gpuclk --sim query --fields index,power.limit --format csv,noheader
\$ gpuclk --sim set -i 9 --power-limit 600
$FENCE

<!-- example: GPUCLK_SIM_SPEED=0 -->
$FENCE
\$ gpuclk --sim --socket /tmp/g.sock serve --listen off &
\$ gpuclk --sim --socket /tmp/g.sock query -i 1 --fields power.limit --format csv,noheader
$FENCE
EOF
docs --update "$D/flow.md"
expect_exit 0
OUT=$(cat "$D/flow.md")
expect_out "GPU  Setting      Before  Target  Read back  Result
  0  power limit  700 W   600 W   600 W      changed
  ...
changed 4 setting(s) on 4 GPU(s); journal …/journal.json"
expect_out "3, 600.00 W"  # the second block runs on the first one's node
expect_out "gpuclk: error: "
expect_out "[exit 6]"
expect_out "gpuclk serve: 4 GPUs (simulated: default), sampling every 100 ms; socket /tmp/g.sock; no HTTP
\$ gpuclk --sim --socket /tmp/g.sock query -i 1 --fields power.limit --format csv,noheader
700.00 W"  # a fresh node: the third block does not continue
docs "$D/flow.md"
expect_exit 0; expect_err "flow.md: 3 example(s) run"

# --- quotes of recorded output, and blocks that are not examples ---
printf 'GPU 0: 685.06 TFLOP/s\n  SM clock 1365 MHz\nsomething else\n' >"$TEST_TMP/recorded.txt"
cat >"$D/marks.md" <<EOF
<!-- quote: $TEST_TMP/recorded.txt -->
$FENCE
\$ gpuclk bench gemm
GPU 0: 685.06 TFLOP/s
...
SM clock   1365 MHz
$FENCE

$FENCE sh
gpuclk --sim set --power-limit 600    # a command to type
$FENCE

$FENCE text
\$ nvtop
 Device 0 [NVIDIA H100 80GB HBM3]
$FENCE
EOF
docs "$D/marks.md"
expect_exit 0; expect_err "marks.md: 0 example(s) run, 1 quote(s) checked"
sed -i 's/685.06/700.00/' "$D/marks.md"
docs "$D/marks.md"
expect_exit 1; expect_out "marks.md:2: not in $TEST_TMP/recorded.txt (after the lines before it): GPU 0: 700.00 TFLOP/s"
cat >"$D/unmarked.md" <<EOF
$FENCE
\$ gpuclk --sim query --fields power.draw
power.draw [W]
75.87 W
$FENCE

$FENCE text
\$ gpuclk --sim query --fields power.draw
75.87 W
$FENCE
EOF
docs "$D/unmarked.md"
expect_exit 1
expect_out "unmarked.md:1: a block with neither a marker nor a language"
expect_out "unmarked.md:7: shows gpuclk's output, but is not generated"

# --- an example a test records: its lines against the test's output, in any order, ports masked ---
printf '# a test\npython3 scripts/doc-examples.py --recorded "gpuclk fleet --prometheus URL" out docs.md\n' >"$TEST_TMP/a_test.sh"
cat >"$D/recorded.md" <<EOF
<!-- example recorded-by=$TEST_TMP/a_test.sh tolerance=5% -->
$FENCE
\$ gpuclk fleet --prometheus URL
127.0.0.1:40001    5  1230 MHz  86 C
...
CRITICAL: 127.0.0.1:40002: GPU 3 fell off the bus
$FENCE
EOF
docs "$D/recorded.md"
expect_exit 0; expect_err "recorded.md: 0 example(s) run, 0 quote(s) checked, 1 recorded by tests"
printf 'CRITICAL: 127.0.0.1:51234: GPU 3 fell off the bus\n127.0.0.1:50999    5  1250 MHz  86 C\n' >"$TEST_TMP/run.txt"
docs --recorded "gpuclk fleet --prometheus URL" "$TEST_TMP/run.txt" "$D/recorded.md"
expect_exit 0; expect_err "1 recorded block(s)"
printf 'CRITICAL: 127.0.0.1:51234: GPU 3 fell off the bus\n127.0.0.1:50999    5  1130 MHz  86 C\n' >"$TEST_TMP/run.txt"
docs --recorded "gpuclk fleet --prometheus URL" "$TEST_TMP/run.txt" "$D/recorded.md"
expect_exit 1; expect_out "printed no line like: 127.0.0.1:40001    5  1230 MHz  86 C"
sed -i 's/--prometheus URL/--prometheus OTHER/' "$TEST_TMP/a_test.sh"
docs "$D/recorded.md"
expect_exit 1; expect_out "which does not check \`gpuclk fleet --prometheus URL\`"

# --- bad markers ---
printf '<!-- example frobnicate=1 -->\n```\n$ true\n```\n' >"$D/bad.md"
docs "$D/bad.md"
expect_exit 1; expect_out "bad.md:1: unknown example option(s) frobnicate"

# --- the README names every scenario --sim knows (doctor/… and governor/… as families) ---
gpuclk --sim=no-such-scenario status
known=$(sed -n 's/.*valid: \(.*\), or a path.*/\1/p' <<<"$ERR" | tr -d ' ' | tr ',' '\n' |
  sed 's#/.*#/…#' | sort -u)
check; [ -n "$known" ] || fail "no scenario list in: $ERR"
listed=$(tr '\n' ' ' <"$ROOT/README.md" | sed -n 's/.*given as amounts of work)\. Scenarios: \(.*\), or a path to your own.*/\1/p' |
  grep -o '`[a-z0-9/…-]*`' | tr -d '`' | sort -u)
for s in $known; do
  check; grep -qxF -- "$s" <<<"$listed" || fail "README.md's list of scenarios lacks $s"
done
for s in $listed; do
  check; grep -qxF -- "$s" <<<"$known" || fail "README.md lists a scenario --sim does not know: $s"
done

finish
