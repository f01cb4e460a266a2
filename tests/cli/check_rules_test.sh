#!/usr/bin/env bash
# scripts/ci/check-rules.sh: the tree keeps the house rules (include direction, clang-format, the
# protocol in src/serve/ only), and each rule and each size limit catches what it is for (a
# scratch repository with one breach of each).
source "$(dirname "$0")/lib.sh" "$1"
SRC=$(cd "$(dirname "$0")/../.." && pwd)
LAST_CMD="scripts/ci/check-rules.sh includes format sizes protocol"

# --- the tree as it is passes (sizes: src/cli/ within the house's 6500 lines too) ---
if git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  OUT=$(env -u MAX_CLI_LINES "$SRC/scripts/ci/check-rules.sh" includes format sizes protocol 2>&1)
  RC=$?
  expect_exit 0
  expect_out "include direction ok"
  expect_out "clang-format ok"
  expect_out "check-rules: sizes ok"
  expect_out "the protocol in src/serve/ only ok"
else
  echo "SKIP: $SRC is not a git checkout; the tree itself is not checked"
fi

# --- gpuclk-serve links no command code; an object with a cli symbol is caught ---
LAST_CMD="scripts/ci/check-rules.sh links"
OUT=$(SERVE_BIN="$(dirname "$GPUCLK_BIN")/gpuclk-serve" "$SRC/scripts/ci/check-rules.sh" links 2>&1)
RC=$?
expect_exit 0
expect_out "gpuclk-serve links no cli or tui code ok"
printf 'namespace gpuclk::cli { int parse_something() { return 1; } }\n' >"$TEST_TMP/with_cli.cpp"
if g++ -c -o "$TEST_TMP/with_cli.o" "$TEST_TMP/with_cli.cpp"; then
  OUT=$(SERVE_BIN="$TEST_TMP/with_cli.o" "$SRC/scripts/ci/check-rules.sh" links 2>&1)
  RC=$?
  expect_exit 1
  expect_out "links code of src/cli or src/tui"
  expect_out "gpuclk::cli::parse_something"
fi

# --- a scratch tree with one breach of each include rule ---
repo=$TEST_TMP/repo
mkdir -p "$repo/scripts/ci" "$repo/src/gpu" "$repo/src/telemetry" "$repo/src/control" "$repo/src/cli" \
  "$repo/src/serve" "$repo/src/output" "$repo/sim/model"
cp "$SRC/scripts/ci/check-rules.sh" "$repo/scripts/ci/"
printf '#include "control/request.h"\n' >"$repo/src/gpu/upward.cpp"
printf '#include "nvml/api.h"\n' >"$repo/src/telemetry/nvml_above_gpu.cpp"
printf 'int policy = NVML_PERF_POLICY_POWER;\n' >"$repo/src/output/nvml_constant.cpp"
printf '#include "cli/context.h"\n' >"$repo/src/control/uses_cli.cpp"
printf '#include "serve/service.h"\n' >"$repo/src/control/uses_serve.cpp"
printf '#include "gpu/device.h"\n' >"$repo/sim/model/uses_gpu.cpp"
printf '#include <thread>\nstd::thread t;\n' >"$repo/src/cli/owns_thread.cpp"
printf 'int f();\n' >"$repo/sim/model/gpu_model.h"
printf '#include "gpu_model.h"\n' >"$repo/src/gpu/bare_sim_include.cpp"
# Allowed: downward includes, the control's NVML writer, the CLI including itself and layers.
printf '#include "nvml/api.h"\n#include "gpu/device.h"\n' >"$repo/src/control/nvml_gpu_control.cpp"
printf '#include "cli/context.h"\n#include "serve/service.h"\n' >"$repo/src/cli/cmd.cpp"
printf '#include "control/request.h"\n#include "telemetry/sampler.h"\n' >"$repo/src/serve/service.cpp"
printf '// NVML_ERROR_GPU_IS_LOST in a comment is fine\n' >"$repo/src/output/comment.cpp"
printf '#include <thread>\n// a std::thread in a comment, std::this_thread::sleep_for(d): fine\n' >"$repo/src/cli/sleeps.cpp"
printf '#include "nvml/sim_abi.h"\n' >"$repo/sim/model/uses_sim_abi.cpp"
git -C "$repo" init -q && git -C "$repo" add -A
OUT=$("$repo/scripts/ci/check-rules.sh" includes 2>&1)
RC=$?
LAST_CMD="check-rules.sh includes (scratch tree)"
expect_exit 1
expect_out "src/gpu/upward.cpp:1: includes control/request.h: gpu (rank 2) may include only lower layers"
expect_out "src/telemetry/nvml_above_gpu.cpp:1: includes nvml/api.h: only src/nvml/"
expect_out "src/output/nvml_constant.cpp:1: int policy = NVML_PERF_POLICY_POWER;: names an NVML constant"
expect_out "src/control/uses_cli.cpp:1: includes cli/context.h: nothing outside src/cli/ includes cli/"
expect_out "src/control/uses_serve.cpp:1: includes serve/service.h: control (rank 4) may include only lower layers, serve is rank 7"
expect_out "sim/model/uses_gpu.cpp:1: includes gpu/device.h: sim/ takes from src/ only the ABI it implements"
expect_out "src/cli/owns_thread.cpp:2: std::thread t;: a thread in src/cli/"
expect_out "src/gpu/bare_sim_include.cpp:1: includes \"gpu_model.h\", a simulator header"
expect_no_out "nvml_gpu_control.cpp"
expect_no_out "src/cli/cmd.cpp"
expect_no_out "src/serve/service.cpp"
expect_no_out "comment.cpp"
expect_no_out "sleeps.cpp"
expect_no_out "uses_sim_abi.cpp"
expect_lines 9

# A layer that is not in the documented order is named.
mkdir -p "$repo/src/newlayer" && printf 'int x;\n' >"$repo/src/newlayer/a.cpp" && git -C "$repo" add -A
OUT=$("$repo/scripts/ci/check-rules.sh" includes 2>&1)
RC=$?
expect_exit 1
expect_out "layer 'newlayer' is not in docs/architecture.md's order"
# --- sizes: a scratch tree with one breach of each limit, and what stays inside them ---
sizes=$TEST_TMP/sizes
mkdir -p "$sizes/scripts/ci" "$sizes/src/gpu" "$sizes/src/nvml" "$sizes/src/cli"
cp "$SRC/scripts/ci/check-rules.sh" "$sizes/scripts/ci/"
# body N: a function body of N lines (the braces' lines included).
body() { echo "{"; for ((i = 2; i < $1; i++)); do echo "  x += $i;"; done; echo "}"; }
{ echo "int x;"; echo "void long_one()"; body 120; } >"$sizes/src/gpu/long.cpp"   # 121 lines
{ echo "int y;"; echo "void fits()"; body 119; } >"$sizes/src/gpu/fits.cpp"       # 120 lines
{ echo "struct S {"; echo "  void run();"; echo "};"; echo "void S::run() {"
  echo "  auto f = [] {"; for ((i = 0; i < 125; i++)); do echo "    int z = $i;"; done
  echo "  };"; echo "}"; } >"$sizes/src/gpu/lambda.cpp"
seq 601 | sed 's|^|// |' >"$sizes/src/gpu/big.h"
seq 600 | sed 's|^|// |' >"$sizes/src/gpu/just_fits.h"
seq 700 | sed 's|^|// |' >"$sizes/src/nvml/nvml_abi.h"  # the ABI's declarations are exempt
for n in $(seq 13); do seq 500 | sed 's|^|// |' >"$sizes/src/cli/cmd_$n.cpp"; done  # 6500
echo "// one more" >"$sizes/src/cli/cmd_extra.cpp"                               # 6501
git -C "$sizes" init -q && git -C "$sizes" add -A
OUT=$("$sizes/scripts/ci/check-rules.sh" sizes 2>&1)
RC=$?
LAST_CMD="check-rules.sh sizes (scratch tree)"
expect_exit 1
expect_out "src/gpu/big.h:601: 601 lines, over 600"
expect_out "src/gpu/long.cpp:2: long_one is 121 lines, over 120"
expect_out "src/gpu/lambda.cpp:5: a lambda in S::run is 127 lines, over 120"
expect_out "src/gpu/lambda.cpp:4: S::run is 129 lines, over 120"
expect_out "src/cli/: 6501 lines in all, over 6500"
expect_no_out "fits"
expect_no_out "nvml_abi.h"
expect_lines 7
# Within every limit: ok.
git -C "$sizes" rm -qf src/gpu/big.h src/gpu/long.cpp src/gpu/lambda.cpp src/cli/cmd_extra.cpp
OUT=$("$sizes/scripts/ci/check-rules.sh" sizes 2>&1)
RC=$?
expect_exit 0
expect_out "check-rules: sizes ok"

# --- the protocol: a request written or an answer decoded outside src/serve/ ---
proto=$TEST_TMP/protocol
mkdir -p "$proto/scripts/ci" "$proto/src/cli" "$proto/src/tui" "$proto/src/serve"
cp "$SRC/scripts/ci/check-rules.sh" "$proto/scripts/ci/"
cat >"$proto/src/cli/asks.cpp" <<'CPP'
int f() {
  auto a = client.request({{ "request" , "status"}});
  auto b = R"({"request":"view","name":"top"})";
  auto c = "{\"request\":\"hello\"}";
  auto d = R"json(
    {"v": 1,
     "request": "history"}
  )json";
  auto e = serve::status_from_json(a.at("status"));
  auto g = gpuclk::serve::node_from_json (b);
}
CPP
cat >"$proto/src/tui/fine.cpp" <<'CPP'
// {"request", "status"} in a comment, and serve::status_from_json(j) too
/* a block comment: {"request", "view"}
   "request" */ int x = 1'000;
char quote = '"'; auto words = "a bad request, \"requests\"";
auto settings = control::settings_from_json(text); auto url = "http://host/request";
CPP
printf 'auto r = json{{"request", "status"}};\nauto s = serve::status_from_json(r);\n' \
  >"$proto/src/serve/client.cpp"
git -C "$proto" init -q && git -C "$proto" add -A
OUT=$("$proto/scripts/ci/check-rules.sh" protocol 2>&1)
RC=$?
LAST_CMD="check-rules.sh protocol (scratch tree)"
expect_exit 1
expect_out "src/cli/asks.cpp:2: \"request\": a request of the service's protocol built or read outside src/serve/"
expect_out "src/cli/asks.cpp:3: \"request\""
expect_out "src/cli/asks.cpp:4: \"request\""
expect_out "src/cli/asks.cpp:7: \"request\""
expect_out "src/cli/asks.cpp:9: an answer of the protocol decoded outside src/serve/"
expect_out "src/cli/asks.cpp:10: an answer of the protocol decoded outside src/serve/"
expect_no_out "fine.cpp"
expect_no_out "src/serve/client.cpp"
expect_lines 7
finish
