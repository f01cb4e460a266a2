#!/usr/bin/env bash
# gpuclk apply PROFILE: the example profile twice (the second run changes nothing), overrides,
# and a bad profile refused before any write.
source "$(dirname "$0")/lib.sh" "$1"
EXAMPLE="$(cd "$(dirname "$0")/../.." && pwd)/deploy/profiles/example.toml"

gpuclk --sim apply "$EXAMPLE" --dry-run
expect_exit 0; expect_out "dry run: would change 8 setting(s) on 4 GPU(s)"

gpuclk --sim apply "$EXAMPLE"
expect_exit 0
expect_out "changed 8 setting(s) on 4 GPU(s)"
expect_out_re "0 +persistence mode +on +on +on +unchanged"
expect_out_re "0 +locked GPU clocks +unknown +1755 MHz +SM [0-9]+ MHz now +changed"
expect_out_re "3 +power limit +700 W +650 W +650 W +changed"

gpuclk --sim apply "$EXAMPLE"
expect_exit 0
expect_out "nothing to change: every GPU already matches $EXAMPLE"
expect_no_out " changed"

sleep 0.1
gpuclk --sim query --query-gpu=index,clocks.sm,power.limit --format=csv,noheader,nounits
expect_out "0, "; expect_out "3, "
# The lock caps the clock (the power limit may hold it lower under the simulated load).
check; awk -F', ' '$2 > 1755 || $3 != "650.00" { bad = 1 } END { exit bad }' <<<"$OUT" || fail "clocks above the lock or power limit not 650 W"

# Overrides and -i.
cat >"$TEST_TMP/p.toml" <<'TOML'
gpus = "0,1,3"
[settings]
power_limit_w = 600
[[override]]
gpus = "3"
power_limit_w = "default"
TOML
gpuclk --sim apply "$TEST_TMP/p.toml" -i 1,2,3
expect_exit 0
expect_out_re "1 +power limit +650 W +600 W"
expect_out_re "3 +power limit +650 W +700 W"
expect_no_out_re() { check; ! grep -qE -- "$1" <<<"$OUT" || fail "stdout matches /$1/"; }
expect_no_out_re "^ +[02] "

# A profile with a bad key or value is refused before anything is written.
printf '[settings]\npower_limit = 600\n' >"$TEST_TMP/bad.toml"
gpuclk --sim apply "$TEST_TMP/bad.toml"
expect_exit 2; expect_err "bad.toml:2: unknown key 'power_limit'"
printf '[settings]\nlocked_gpu_clocks = "1234"\n' >"$TEST_TMP/bad2.toml"
gpuclk --sim apply "$TEST_TMP/bad2.toml"
expect_exit 2; expect_err "1234 MHz is not supported; nearest: 1230 MHz or 1245 MHz"
gpuclk --sim apply "$TEST_TMP/missing.toml"
expect_exit 2; expect_err "cannot read profile"

gpuclk --sim restore
expect_exit 0
gpuclk --sim query --query-gpu=index,power.limit --format=csv,noheader,nounits
expect_out "0, 700.00"; expect_out "1, 700.00"; expect_out "3, 700.00"

finish
