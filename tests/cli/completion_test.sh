#!/usr/bin/env bash
# Shell completion of values, not only of commands and options: `gpuclk completion bash` sourced
# into this bash and asked as bash asks it (COMP_WORDS split at '=' as COMP_WORDBREAKS splits
# them): --format's formats, --sim='s scenarios (the simulator's folder), govern's policies,
# sweep's and sim-job's workloads, bench gemm's dtypes, and -i the node's GPUs (on the simulated
# node the line names). serve --policy is a file (no words). The zsh script carries the same
# choices in its _arguments specs; zsh itself checks its syntax where it is installed.
source "$(dirname "$0")/lib.sh" "$1"
"$GPUCLK_BIN" completion bash >"$TEST_TMP/gpuclk.bash"
check; bash -n "$TEST_TMP/gpuclk.bash" || fail "the bash script does not parse"
# The completion runs `command gpuclk` for -i (lib.sh's gpuclk() function is not it).
PATH="$GPUCLK_BIN_DIR:$PATH"
source "$TEST_TMP/gpuclk.bash"
# complete WORD...: what _gpuclk offers for the last word.
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _gpuclk
  OUT="${COMPREPLY[*]}"
  LAST_CMD="completion of: $*"
}
expect_words() { check; [ "$OUT" == "$1" ] || fail "offered '$OUT', expected '$1'"; }

complete_words gpuclk status --format ""
expect_words "table csv csv,noheader csv,nounits csv,noheader,nounits json"
complete_words gpuclk --format = cs
expect_words "csv csv,noheader csv,nounits csv,noheader,nounits"
complete_words gpuclk --sim = 8x
expect_words "8xh100"
complete_words gpuclk --sim = ""
expect_out "2xh200"; expect_out "misconfigured"; expect_out "default"
complete_words gpuclk govern --policy ""
expect_words "threshold geopm phase bandit"
complete_words gpuclk serve --policy ""
expect_words ""
complete_words gpuclk sweep --workload mem
expect_words "mem-copy mem-triad"
complete_words gpuclk sim-job --workload = gemm-f
expect_words "gemm-fp16 gemm-fp32 gemm-fp8"
complete_words gpuclk bench gemm --dtype b
expect_words "bf16"
complete_words gpuclk --sim = 2xh200 status -i ""
expect_words "0 1"
complete_words gpuclk --sim -i ""
expect_words "0 1 2 3"
# Commands and options as before.
complete_words gpuclk sta
expect_words "status stat"
complete_words gpuclk govern --pol
expect_words "--policy"

"$GPUCLK_BIN" completion zsh >"$TEST_TMP/_gpuclk"
OUT=$(cat "$TEST_TMP/_gpuclk"); LAST_CMD="gpuclk completion zsh"
expect_out "'--format=[table | csv\\[,noheader\\]\\[,nounits\\] | json]:text:(table csv csv,noheader csv,nounits csv,noheader,nounits json)'"
expect_out ":text:(threshold geopm phase bandit)'"
expect_out "'-i+[GPUs: indexes, UUIDs or PCI bus ids, comma separated (default: all)]:text:_gpuclk_gpus'"
if command -v zsh >/dev/null; then
  check; zsh -n "$TEST_TMP/_gpuclk" || fail "the zsh script does not parse"
fi
finish
