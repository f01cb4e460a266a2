#!/usr/bin/env bash
# On the real GPU: read-only mode refuses every write command (set, reset, restore, apply) with
# exit 4, and nothing on the card changes (nvidia-smi before = after). Issue 5, docs/architecture.md
# decision 6. It must never be able to write, so it is belt and braces:
#   - GPUCLK_READ_ONLY=1 is exported first and --read-only is passed to every command;
#   - the journal goes to a fresh temporary --state-dir, never /var/lib/gpuclk;
#   - the values asked for are the card's current ones (a set that did go through would change
#     nothing), no clock lock is asked for, and reset runs only if the card is at its defaults.
#
#   tests/device/readonly_test.sh      (GPUCLK_BIN, default build/device/gpuclk; OUT for logs)
# Prints a Markdown table (also $OUT/readonly.md, for docs/results/); exit 1 on any failure, 77
# when there is no GPU.
export GPUCLK_READ_ONLY=1
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${GPUCLK_BIN:-build/device/gpuclk}
OUT=${OUT:-/tmp/gpuclk-readonly}
mkdir -p "$OUT"
STATE=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-readonly-state.XXXXXX")
rmdir "$STATE"  # must not exist afterwards either: nothing may create the journal
trap 'rm -rf "$STATE" "$OUT/profile.toml.tmp"' EXIT

if [ "${GPUCLK_READ_ONLY:-}" != "1" ]; then echo "GPUCLK_READ_ONLY is not 1: refusing to run"; exit 1; fi
if ! nvidia-smi -L >/dev/null 2>&1; then echo "skip: no NVIDIA GPU here"; exit 77; fi

FIELDS=index,uuid,persistence_mode,clocks.applications.graphics,clocks.applications.memory,power.limit,enforced.power.limit,clocks.max.sm
snapshot() { nvidia-smi --query-gpu="$FIELDS" --format=csv,noheader; }
BEFORE=$(snapshot)
echo "$BEFORE" >"$OUT/before.csv"
var_lib_existed=no; [ -e /var/lib/gpuclk ] && var_lib_existed=yes

# The card's current settings (GPU 0), so that the requests below would be no-ops anyway.
IFS=', ' read -r _ _ pm app_gfx app_mem limit _ _ <<<"$(echo "$BEFORE" | head -1 | sed 's/ MHz//g; s/ W//g')"
persist=$([ "$pm" = "Enabled" ] && echo on || echo off)
limit_w=$(printf '%.0f' "$limit")
cat >"$OUT/profile.toml" <<TOML
gpus = "0"
[settings]
persistence_mode = "$persist"
application_clocks = "$app_mem,$app_gfx"
power_limit_w = $limit_w
TOML

declare -a CASES=(
  "set -i 0 --power-limit $limit_w"
  "set -i 0 --app-clocks $app_mem,$app_gfx"
  "set -i 0 --persistence $persist"
  "set --all --power-limit $limit_w --app-clocks $app_mem,$app_gfx"
  "restore"
  "apply $OUT/profile.toml"
)
at_defaults=$(nvidia-smi --query-gpu=clocks.applications.graphics,clocks.default_applications.graphics,power.limit,power.default_limit \
  --format=csv,noheader,nounits | awk -F', ' '$1 != $2 || $3 != $4 { bad = 1 } END { print bad ? "no" : "yes" }')
if [ "$at_defaults" = "yes" ]; then
  CASES+=("reset -i 0 --app-clocks --power-limit" "reset")
else
  echo "note: the card is not at its default application clocks/power limit; reset is not run"
fi

failures=0
{
  echo "| command (with GPUCLK_READ_ONLY=1 and --read-only) | exit | refused with exit 4 | message |"
  echo "|---|---|---|---|"
  for args in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    "$BIN" --read-only --state-dir "$STATE" $args >"$OUT/out.txt" 2>"$OUT/err.txt"
    rc=$?
    ok=no
    if [ "$rc" -eq 4 ] && grep -q "read-only mode" "$OUT/err.txt"; then ok=yes; else failures=$((failures + 1)); fi
    echo "| \`gpuclk $args\` | $rc | $ok | $(head -1 "$OUT/err.txt" | sed 's/|/\\|/g') |"
    cat "$OUT/out.txt" "$OUT/err.txt" >>"$OUT/commands.log"
  done
  # A dry run only reads: allowed in read-only mode, and writes nothing.
  "$BIN" --read-only --state-dir "$STATE" set -i 0 --power-limit "$limit_w" --dry-run >"$OUT/dryrun.txt" 2>&1
  rc=$?
  echo "| \`gpuclk set -i 0 --power-limit $limit_w --dry-run\` (reads only) | $rc | n/a | $(tail -1 "$OUT/dryrun.txt") |"
  [ "$rc" -eq 0 ] || failures=$((failures + 1))

  AFTER=$(snapshot)
  echo "$AFTER" >"$OUT/after.csv"
  same=no; [ "$BEFORE" == "$AFTER" ] && same=yes || failures=$((failures + 1))
  echo
  echo "nvidia-smi --query-gpu=$FIELDS before = after: **$same**"
  journal=absent; [ -e "$STATE" ] && { journal="CREATED"; failures=$((failures + 1)); }
  echo "state dir $STATE (journal): $journal"
  if [ "$var_lib_existed" = no ] && [ -e /var/lib/gpuclk ]; then
    echo "/var/lib/gpuclk: CREATED"; failures=$((failures + 1))
  fi
  echo
  echo "$failures failure(s)"
} | tee "$OUT/readonly.md"
failures=$(tail -1 "$OUT/readonly.md" | cut -d' ' -f1)
[ "$failures" -eq 0 ]
