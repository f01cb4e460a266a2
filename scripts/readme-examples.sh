#!/usr/bin/env bash
# README examples, generated from the commands they show: every fenced block right after a
# `<!-- example -->` comment is a transcript — each `$ COMMAND` line is run (from the repository
# root, with `gpuclk` the binary given) and followed by what it printed (stdout and stderr). The
# comment may give environment the block does not show: `<!-- example: GPUCLK_SIM_SPEED=0 -->`.
#
#   scripts/readme-examples.sh [--update] [path/to/gpuclk] [README.md]
#
# Without --update it fails (exit 1) with a diff when a block's output changed; with --update it
# rewrites the blocks. Each block runs on a fresh simulator state and journal (a temporary
# GPUCLK_SIM_STATE and GPUCLK_STATE_DIR), so a block reproduces whatever ran before. Volatile
# values are masked in the output: the temporary directory (shown as `…`); trailing blanks go.
# tests/cli/readme_examples_test.sh runs it on every `make test`.
set -u
update=0
if [ "${1:-}" = "--update" ]; then
  update=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/release/gpuclk}
readme=${2:-$root/README.md}
[ -x "$bin" ] || { echo "readme-examples: no gpuclk at $bin (build it, or give its path)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuclk-readme.XXXXXX")
trap 'rm -rf "$work"' EXIT

# run_block ENV FILE: runs every `$ ` line of the block in FILE, writes the transcript to stdout.
run_block() {
  local env=$1 block=$2 n=$3 line
  local dir="$work/$n"
  mkdir -p "$dir"
  while IFS= read -r line; do
    case "$line" in
      '$ '*)
        printf '%s\n' "$line"
        (
          cd "$root" || exit 1
          export GPUCLK_SIM_STATE="$dir/sim.state" GPUCLK_STATE_DIR="$dir/state"
          unset GPUCLK_SIM_SPEED GPUCLK_SIM_START GPUCLK_SIM_ADVANCE GPUCLK_SIM_SCENARIO \
            GPUCLK_NVML_LIB GPUCLK_READ_ONLY GPUCLK_SOCKET
          gpuclk() { "$bin" "$@"; }
          export -f gpuclk 2>/dev/null
          export bin
          eval "$env ${line#\$ }" </dev/null 2>&1
        ) | sed -e "s#$dir/[^ ]*/#…/#g" -e "s#$dir/[^ ]*#…#g" -e 's/[[:space:]]*$//'
        ;;
    esac
  done <"$block"
}

out="$work/README.new"
: >"$out"
status=0
n=0
pending=""   # the comment's environment, for the next fenced block
in_block=0
block="$work/block"
while IFS= read -r line || [ -n "$line" ]; do
  if [ "$in_block" = 1 ]; then
    if [ "$line" = '```' ]; then
      in_block=0
      n=$((n + 1))
      run_block "$pending" "$block" "$n" >"$work/got"
      if ! diff -u --label "README block $n (as written)" --label "README block $n (as run now)" \
        "$block" "$work/got" >"$work/diff"; then
        if [ "$update" = 1 ]; then
          echo "readme-examples: block $n updated" >&2
        else
          cat "$work/diff"
          status=1
        fi
      fi
      cat "$work/got" >>"$out"
      printf '%s\n' "$line" >>"$out"
      pending=""
    else
      printf '%s\n' "$line" >>"$block"
    fi
    continue
  fi
  printf '%s\n' "$line" >>"$out"
  case "$line" in
    '<!-- example -->') pending=" " ;;
    '<!-- example: '*' -->')
      pending=${line#'<!-- example: '}
      pending=${pending%' -->'}
      ;;
    '```'*)
      if [ -n "$pending" ]; then
        in_block=1
        : >"$block"
      fi
      ;;
    *) [ -n "$line" ] && pending="" ;;
  esac
done <"$readme"

echo "readme-examples: $n example block(s) checked" >&2
if [ "$update" = 1 ]; then
  cmp -s "$out" "$readme" || cp "$out" "$readme"
  exit 0
fi
[ "$status" = 0 ] || echo "readme-examples: the README's examples differ from what the commands print; scripts/readme-examples.sh --update rewrites them" >&2
exit "$status"
