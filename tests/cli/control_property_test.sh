#!/usr/bin/env bash
# Property test of `gpuclk set` (issue 17): random valid and invalid requests on random simulated
# nodes (scenario files written here: 1-8 GPUs of three models, privileged or not). For each,
# either nothing is written and the exit code is 2/3/4/6/15, or exactly the requested values land
# on exactly the requested GPUs — read back with `gpuclk query` and compared, GPU by GPU.
# Fixed seed, bounded count (PROPERTY_CASES, default 60: ~3 s a case on a busy 2-core machine).
source "$(dirname "$0")/lib.sh" "$1"
RANDOM=17
CASES=${PROPERTY_CASES:-60}
MODELS=(h100-sxm5-80gb a100-sxm4-80gb l4)
FIELDS=index,persistence_mode,power.limit,power.min_limit,power.max_limit

readback() {  # CSV of FIELDS, one GPU a line
  "$GPUCLK_BIN" --sim="$SCENARIO" query --query-gpu=$FIELDS --format=csv,noheader,nounits
}

for ((c = 0; c < CASES; c++)); do
  export GPUCLK_SIM_STATE="$TEST_TMP/case$c.state" GPUCLK_STATE_DIR="$TEST_TMP/case$c.journal"
  SCENARIO="$TEST_TMP/node$c.toml"
  count=$((RANDOM % 8 + 1))
  privileged=true; ((RANDOM % 6 == 0)) && privileged=false
  {
    printf '[node]\ngpu_model = "%s"\ngpu_count = %d\nprivileged = %s\n' \
      "${MODELS[RANDOM % 3]}" "$count" "$privileged"
    # Some GPUs of another model: a mixed node.
    if ((RANDOM % 3 == 0)); then printf '[[gpu]]\nindex = %d\ngpu_model = "%s"\n' $((RANDOM % count)) "${MODELS[RANDOM % 3]}"; fi
  } > "$SCENARIO"
  BEFORE=$(readback) || { LAST_CMD="readback of $SCENARIO"; fail "cannot read the node: $(cat "$SCENARIO")"; continue; }

  # Which GPUs: a valid subset, or one of the invalid forms.
  expect_code=0
  sel=() ; chosen=()
  case $((RANDOM % 8)) in
    0) sel=(-i ""); expect_code=2 ;;
    1) sel=(-i "$count"); expect_code=6 ;;
    2) sel=(-i "1844674407370955161$((RANDOM % 10))"); expect_code=2 ;;
    3) sel=(); for ((g = 0; g < count; g++)); do chosen+=($g); done ;;
    *) list=""
       for ((g = 0; g < count; g++)); do
         if ((RANDOM % 2)); then chosen+=($g); list+="${list:+,}$g"; fi
       done
       [ -z "$list" ] && { chosen=(0); list=0; }
       sel=(-i "$list") ;;
  esac

  # What: a power limit (in range, out of range, or malformed) and/or persistence.
  args=() ; want_power="" ; want_pm=""
  if ((RANDOM % 4 != 0)); then
    # The range every selected GPU accepts (mixed nodes: possibly none).
    sub=$BEFORE
    if [ ${#chosen[@]} -gt 0 ]; then sub=$(grep -E "^($(IFS='|'; echo "${chosen[*]}"))," <<<"$BEFORE"); fi
    lo=$(cut -d, -f4 <<<"$sub" | tr -d ' ' | sort -n | tail -1)
    hi=$(cut -d, -f5 <<<"$sub" | tr -d ' ' | sort -n | head -1)
    lo=${lo%.*}; hi=${hi%.*}
    case $((RANDOM % 5)) in
      0) p=$((hi + 1 + RANDOM % 5000)); [ $expect_code -eq 0 ] && expect_code=2 ;;
      1) p=$(((lo > 1 ? lo - 1 - RANDOM % (lo - 1) : 0))); [ $expect_code -eq 0 ] && expect_code=2
         [ "$p" -le 0 ] && p=0 ;;
      2) p=$(((RANDOM % 3 == 0) ? 4295617 : 99999999999999999999)).$((RANDOM % 1000)); [ $expect_code -eq 0 ] && expect_code=2 ;;
      *) if [ "$hi" -lt "$lo" ]; then
           p=$hi; [ $expect_code -eq 0 ] && expect_code=2  # no limit fits every selected GPU
         else
           p=$((lo + RANDOM % (hi - lo + 1))); [ "$p" -lt "$hi" ] && p=$p.$((RANDOM % 2 * 5))
           want_power=$p
         fi ;;
    esac
    args+=(--power-limit "$p")
  fi
  if ((RANDOM % 2)) || [ ${#args[@]} -eq 0 ]; then
    want_pm=$([ $((RANDOM % 2)) -eq 0 ] && echo Enabled || echo Disabled)
    args+=(--persistence "$([ "$want_pm" = Enabled ] && echo on || echo off)")
  fi
  [ "$privileged" = false ] && [ $expect_code -eq 0 ] && expect_code=4

  gpuclk --sim="$SCENARIO" "${sel[@]}" set "${args[@]}"
  AFTER=$(readback)
  LAST_CMD="case $c: gpuclk ${sel[*]} set ${args[*]} on $(tr '\n' ' ' < "$SCENARIO")"
  check
  # Without privileges a request that changes nothing needs no write, and succeeds.
  if [ "$expect_code" -eq 4 ] && [ "$RC" -eq 0 ] && [ "$AFTER" == "$BEFORE" ]; then
    continue
  elif [ "$RC" -ne "$expect_code" ]; then
    fail "exit $RC, expected $expect_code"
  elif [ "$RC" -ne 0 ]; then
    [ "$AFTER" == "$BEFORE" ] || fail "refused (exit $RC) yet the GPUs changed: $BEFORE -> $AFTER"
  else
    # Exactly the requested values on exactly the requested GPUs.
    while IFS=', ' read -r idx pm power _; do
      old=$(grep "^$idx," <<<"$BEFORE")
      if [[ " ${chosen[*]} " == *" $idx "* ]]; then
        [ -n "$want_power" ] && [ "$power" != "$(printf '%.2f' "$want_power")" ] &&
          fail "GPU $idx power $power, requested $want_power"
        [ -n "$want_pm" ] && [ "$pm" != "$want_pm" ] && fail "GPU $idx persistence $pm, requested $want_pm"
      else
        [ "$(grep "^$idx," <<<"$AFTER")" == "$old" ] || fail "GPU $idx was not selected yet changed"
      fi
    done <<<"$AFTER"
  fi
done
echo "$CASES cases"
finish
