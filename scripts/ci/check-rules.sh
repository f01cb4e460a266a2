#!/usr/bin/env bash
# The house rules a machine can check (docs/architecture.md), run by .ci/run after the tests:
#   1. include direction: a layer of src/ includes only lower layers (the order is
#      docs/architecture.md's table); only src/nvml/, src/gpu/ and the control's NVML writer include
#      nvml/ headers (and src/cli/context.cpp, which opens the library); nothing outside src/cli/
#      includes cli/; sim/ takes from src/ only the NVML ABI it implements; no thread in src/cli/;
#      no simulator header included from src/;
#   2. clang-format --dry-run --Werror on every tracked C++ file (.clang-format);
#   3. clang-tidy (.clang-tidy) on the C++ sources changed since the last commit found clean
#      (.ci/tidy-clean, written by `make tidy`), else since the merge base with main, or on every
#      source with TIDY=all (about 8 s of CPU per file: ~7 minutes on 2 cores);
#   4. sizes, on the whole tree (well under a second): no file in src/ over 600 lines (the NVML
#      ABI's declarations, src/nvml/nvml_abi.h, aside), no function or lambda in src/ over 120
#      lines (universal-ctags finds each definition's first and last line), src/cli/ at most
#      6500 lines in all.
#   5. links: the built gpuclk-serve (SERVE_BIN, default build/release/gpuclk-serve) holds no
#      symbol of src/cli or src/tui (nm); not run by default (it needs the build).
#   6. protocol: the service's socket protocol is spoken in src/serve/ only: no request written
#      (a "request" key) and no answer decoded (serve::…_from_json) elsewhere in src/; commands,
#      top and the read seams ask through serve::Client's typed requests (serve/client.h).
# Usage: scripts/ci/check-rules.sh [includes|format|tidy|sizes|protocol|links]...
#   (default: all but links)
# Environment: BUILD_DIR (a tree with compile_commands.json, configured here when missing; default
#   build/tidy),
#   TIDY=all|changed|off (default changed), TIDY_BASE (the ref to diff against; default the commit
#   in .ci/tidy-clean when history has it, else the merge base with main or origin/main),
#   TIDY_RECORD=1 (on a clean pass with no uncommitted C++ change, write HEAD to .ci/tidy-clean:
#   every C++ file as of HEAD has been through clang-tidy), JOBS (default nproc).
# Exit: 0 when every check passed, 1 otherwise; each violation is printed as FILE:LINE: why.
set -uo pipefail
cd "$(dirname "$0")/../.."
CHECKS=${*:-includes format tidy sizes protocol}
JOBS=${JOBS:-$(nproc)}
failed=0

# --- 1. include direction --------------------------------------------------------------------
# Rank of each layer of src/ (docs/architecture.md): a layer may include only lower ranks.
rank_of() {
  case $1 in
    util) echo 0 ;;
    host | nvml) echo 1 ;;
    gpu) echo 2 ;;
    output | occupancy | telemetry) echo 3 ;;
    control | bench | attribution) echo 4 ;;
    rules) echo 5 ;;
    sweep | govern | views) echo 6 ;;
    serve) echo 7 ;;
    tui | fleet) echo 8 ;;
    cli | daemon) echo 9 ;;
    *) echo "" ;;
  esac
}

# May this file include nvml/ headers? (NVML's C types stay below src/gpu/.)
nvml_allowed() {
  case $1 in
    src/nvml/* | src/gpu/* | src/control/nvml_gpu_control.* | src/cli/context.cpp) return 0 ;;
    src/daemon/serve_run.cpp) return 0 ;;  # gpuclk-serve opens the library, as context.cpp does
    sim/* | tests/* | perf/*) return 0 ;;
    *) return 1 ;;
  esac
}

check_includes() {
  echo "check-rules: include direction"
  local bad=0 file line included target layer r_file r_target
  for dir in src/*/; do
    layer=$(basename "$dir")
    if [ -z "$(rank_of "$layer")" ]; then
      echo "$dir: layer '$layer' is not in docs/architecture.md's order (add it there and to scripts/ci/check-rules.sh)"
      bad=1
    fi
  done
  while IFS=: read -r file line included; do
    target=${included%%/*}
    # nvml/ headers: only where NVML's types may be seen.
    if [ "$target" = nvml ] && ! nvml_allowed "$file"; then
      echo "$file:$line: includes $included: only src/nvml/, src/gpu/ and src/control/nvml_gpu_control.* may (use gpu::Device, gpu/simulator.h)"
      bad=1
    fi
    case $file in
      src/cli/*) continue ;;
      src/*) ;;
      sim/*)
        if [ -n "$(rank_of "$target")" ] && [ "$included" != nvml/nvml_abi.h ] && [ "$included" != nvml/error_text.h ] && [ "$included" != nvml/sim_abi.h ]; then
          echo "$file:$line: includes $included: sim/ takes from src/ only the ABI it implements (nvml/nvml_abi.h, nvml/sim_abi.h, nvml/error_text.h)"
          bad=1
        fi
        continue ;;
      *) continue ;;
    esac
    layer=${file#src/}; layer=${layer%%/*}
    [ "$target" = "$layer" ] && continue
    r_target=$(rank_of "$target")
    [ -z "$r_target" ] && continue  # not a layer (a library's header)
    if [ "$target" = cli ]; then
      echo "$file:$line: includes $included: nothing outside src/cli/ includes cli/ (move what it needs down into a layer)"
      bad=1
      continue
    fi
    r_file=$(rank_of "$layer")
    if [ -n "$r_file" ] && [ "$r_target" -ge "$r_file" ]; then
      echo "$file:$line: includes $included: $layer (rank $r_file) may include only lower layers, $target is rank $r_target (docs/architecture.md)"
      bad=1
    fi
  done < <(git ls-files -- 'src/*' 'sim/*' 'tests/*' 'perf/*' | grep -E '\.(cpp|h|hpp|cu|cuh)$' |
    xargs grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]+/' |
    sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1:\2:\3/')
  # Above src/gpu/, no NVML constant or C type in code either (comments may name them).
  while IFS= read -r hit; do
    file=${hit%%:*}
    nvml_allowed "$file" && continue
    echo "$hit: names an NVML constant or type above src/gpu/ (use a gpu:: enum or unit type)"
    bad=1
  done < <(git ls-files -- 'src/*' | grep -E '\.(cpp|h|hpp)$' | xargs awk '
    { code = $0; sub(/\/\/.*/, "", code) }
    code ~ /(^|[^A-Za-z_"])(NVML_[A-Z0-9_]+|nvml[A-Z][A-Za-z0-9_]*_t)([^A-Za-z0-9_]|$)/ {
      print FILENAME ":" FNR ": " $0 }')
  # src/cli/ holds commands: a thread belongs in the layer whose work it does (serve::Node's
  # parts, rules::watch, the telemetry sampler), where it can be unit-tested and stopped in order.
  while IFS= read -r hit; do
    echo "$hit: a thread in src/cli/ (commands parse, call and print; move it into a layer)"
    bad=1
  done < <(git ls-files -- 'src/cli/*' | grep -E '\.(cpp|h)$' | xargs awk '
    { code = $0; sub(/\/\/.*/, "", code) }
    code ~ /std::(j?thread|async)[^:_A-Za-z]|pthread_create/ { print FILENAME ":" FNR ": " $0 }')
  # A bare-name include of a simulator header (one found through sim/'s include paths) hides a
  # dependency on sim/ that the include direction cannot see: src/ reaches the simulator only
  # through the ABI in src/nvml/ (nvml_abi.h, sim_abi.h). The one exception is `govern
  # --evaluate`, which runs the simulator's model in-process by design (src/govern/CMakeLists.txt:
  # gpuclk_govern_evaluate links gpuclk_sim_model; docs/govern.md).
  local sim_headers
  sim_headers=$(git ls-files -- 'sim/*.h' | xargs -n1 basename | sort -u)
  while IFS=: read -r file line included; do
    [ -e "src/$included" ] && continue
    [ "$file" = src/govern/evaluate.cpp ] && continue
    if grep -qxF "$(basename "$included")" <<<"$sim_headers"; then
      echo "$file:$line: includes \"$included\", a simulator header: src/ reaches the simulator only through src/nvml/sim_abi.h"
      bad=1
    fi
  done < <(git ls-files -- 'src/*' | grep -E '\.(cpp|h)$' |
    xargs grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' |
    sed -E 's/^([^:]+):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1:\2:\3/')
  [ $bad -eq 0 ] && echo "check-rules: include direction ok" || failed=1
}

# --- 2. clang-format ---------------------------------------------------------------------------
check_format() {
  echo "check-rules: clang-format"
  local files
  files=$(git ls-files -- '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
  local complaints
  complaints=$(echo "$files" | xargs clang-format --dry-run --Werror 2>&1 | grep -E 'error:' || true)
  if [ -n "$complaints" ]; then
    echo "$complaints" | head -50
    echo "check-rules: clang-format would change $(echo "$complaints" | cut -d: -f1 | sort -u | wc -l) file(s): run make format"
    failed=1
  else
    echo "check-rules: clang-format ok ($(echo "$files" | wc -l) files)"
  fi
}

# --- 3. clang-tidy -----------------------------------------------------------------------------
check_tidy() {
  local mode=${TIDY:-changed} build=${BUILD_DIR:-build/tidy}
  [ "$mode" = off ] && { echo "check-rules: clang-tidy skipped (TIDY=off)"; return; }
  # clang-tidy reads each source as the compiler does, one by one: a build tree configured
  # without unity batches or gcc's precompiled headers (compile_commands.json only, and the
  # simulator's generated header; nothing else is built).
  if [ -f "$build/compile_commands.json" ] && grep -q '/Unity/unity_' "$build/compile_commands.json"; then
    build=build/tidy
  fi
  if [ ! -f "$build/compile_commands.json" ]; then
    cmake -S . -B "$build" -G Ninja -DGPUCLK_UNITY=OFF -DGPUCLK_PCH=OFF >"$build.configure.log" 2>&1 ||
      { echo "check-rules: configuring $build for clang-tidy failed ($build.configure.log)"; failed=1; return; }
  fi
  cmake --build "$build" --target nvml_sim_entry_points >/dev/null 2>&1 || true
  local files base=${TIDY_BASE:-} marker=.ci/tidy-clean
  if [ "$mode" != all ] && [ -z "$base" ] && [ -f "$marker" ] &&
    git cat-file -e "$(cat "$marker")^{commit}" 2>/dev/null; then
    base=$(cat "$marker")
    echo "check-rules: clang-tidy was clean at $(git rev-parse --short "$base") ($marker)"
  fi
  if [ "$mode" != all ] && [ -z "$base" ]; then
    base=$(git merge-base HEAD main 2>/dev/null || git merge-base HEAD origin/main 2>/dev/null || true)
    # On main itself the last commit is the change.
    if [ -z "$base" ] || [ "$base" = "$(git rev-parse HEAD)" ]; then
      base=$(git rev-parse -q --verify HEAD~1 2>/dev/null || true)
    fi
    # No history to compare with (a shallow clone): the whole tree.
    [ -z "$base" ] && mode=all
  fi
  if [ "$mode" = all ]; then
    files=$(git ls-files -- 'src/*.cpp' 'sim/*.cpp')
  else
    files=$( (git diff --name-only --diff-filter=d "$base" -- 'src/*.cpp' 'sim/*.cpp' 'src/*.h' 'sim/*.h'
      git ls-files --others --exclude-standard -- 'src/*.cpp' 'sim/*.cpp') | sort -u)
    # A changed header: tidy the sources of its folder, which include it.
    local headers sources=""
    headers=$(echo "$files" | grep -E '\.h$' || true)
    for h in $headers; do sources+=$'\n'$(git ls-files -- "$(dirname "$h")/*.cpp"); done
    files=$( (echo "$files" | grep -E '\.cpp$'; echo "$sources") | grep -E '\.cpp$' | sort -u)
  fi
  # Only files the build compiles (CUDA-less builds skip the .cu-backed sources).
  files=$(for f in $files; do grep -q "\"file\": \"$PWD/$f\"" "$build/compile_commands.json" && echo "$f"; done)
  local count
  count=$(echo "$files" | grep -c . || true)
  echo "check-rules: clang-tidy on $count file(s) ($mode, $build)"
  [ "$count" -eq 0 ] && { record_tidy_clean; return; }
  local start=$SECONDS log
  log=$(mktemp)
  echo "$files" | xargs -P "$JOBS" -n 4 clang-tidy -p "$build" --quiet --warnings-as-errors='*' >"$log" 2>&1
  local rc=$?
  grep -E 'warning:|error:' "$log" | sort -u | head -100
  rm -f "$log"
  if [ $rc -ne 0 ]; then
    echo "check-rules: clang-tidy found the problems above ($((SECONDS - start)) s)"
    failed=1
  else
    echo "check-rules: clang-tidy ok ($((SECONDS - start)) s)"
    record_tidy_clean
  fi
}

# With TIDY_RECORD=1, after a clean pass: HEAD's C++ files have all been through clang-tidy (the
# earlier ones at the previous mark), so the next run needs only what changes after HEAD.
record_tidy_clean() {
  [ "${TIDY_RECORD:-0}" = 1 ] || return 0
  if [ -n "$(git status --porcelain -- 'src/*.cpp' 'src/*.h' 'sim/*.cpp' 'sim/*.h')" ]; then
    echo "check-rules: uncommitted C++ changes: .ci/tidy-clean left as it is (commit, then make tidy)"
    return 0
  fi
  git rev-parse HEAD >.ci/tidy-clean
  echo "check-rules: .ci/tidy-clean = $(git rev-parse --short HEAD) (commit it: CI tidies only what changes after)"
}

# --- 4. sizes ----------------------------------------------------------------------------------
# A file a newcomer can read whole, a function that fits a screen or two, commands that stay
# commands (docs/architecture.md). Counted in lines as `wc -l` does; a function from the line
# with its name to its closing brace, as universal-ctags reports them (clang-tidy's
# readability-function-size counts the same body brace to brace, but at ~8 s a file it cannot
# look at the whole tree on every run; ctags does in a fraction of a second).
MAX_FILE_LINES=600
MAX_FUNCTION_LINES=120
MAX_CLI_LINES=${MAX_CLI_LINES:-6500}
check_sizes() {
  echo "check-rules: sizes"
  if ! command -v ctags >/dev/null || ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
    echo "check-rules: sizes needs universal-ctags (scripts/install-deps.sh)"
    failed=1
    return
  fi
  local bad=0 sources hit
  sources=$(git ls-files -- 'src/*' | grep -E '\.(cpp|h|hpp|cu|cuh)$')
  while IFS= read -r hit; do
    echo "$hit"
    bad=1
  done < <(echo "$sources" | grep -vxF src/nvml/nvml_abi.h | xargs awk -v max=$MAX_FILE_LINES '
    FNR == max + 1 { over[FILENAME] = 1 }
    END { for (f in over) print f }' | sort | while IFS= read -r f; do
      echo "$f:$((MAX_FILE_LINES + 1)): $(wc -l <"$f") lines, over $MAX_FILE_LINES: split it by concern"
    done)
  # Tags: NAME<TAB>FILE<TAB>PATTERN;"<TAB>KIND<TAB>line:N<TAB>[scope:NAME<TAB>]…end:M. A lambda
  # is tagged as a function too (__anonXXX, its scope the function it is in).
  while IFS= read -r hit; do
    echo "$hit"
    bad=1
  done < <(echo "$sources" |
    ctags --sort=no --langmap=C++:+.cu.cuh --languages=C++ --kinds-C++=f --fields=+ne -L - -o - |
    awk -F'\t' -v max=$MAX_FUNCTION_LINES '
      {
        line = 0; end = 0; scope = ""
        for (i = 4; i <= NF; i++) {
          if ($i ~ /^line:/) line = substr($i, 6)
          else if ($i ~ /^end:/) end = substr($i, 5)
          else if ($i ~ /^(class|struct|union|function):/) { scope = $i; sub(/^[a-z]+:/, "", scope) }
        }
        n = end - line + 1
        if (line == 0 || end == 0 || n <= max) next
        gsub(/(^|::)__anon[0-9a-f]+/, "", scope); sub(/^::/, "", scope)
        if ($1 ~ /^__anon/) what = "a lambda in " (scope == "" ? "namespace scope" : scope)
        else what = (scope == "" ? "" : scope "::") $1
        sub(/^gpuclk::[a-z_]+::/, "", what); sub(/ gpuclk::[a-z_]+::/, " ", what)
        printf "%s:%d: %s is %d lines, over %d: split it into named steps\n", $2, line, what, n, max
      }' | sort -t: -k1,1 -k2,2n)
  local cli
  cli=$(git ls-files -- 'src/cli/*' | xargs cat | wc -l)
  if [ "$cli" -gt $MAX_CLI_LINES ]; then
    echo "src/cli/: $cli lines in all, over $MAX_CLI_LINES: commands parse, call and print; move the rest into a layer"
    bad=1
  fi
  [ $bad -eq 0 ] && echo "check-rules: sizes ok ($(echo "$sources" | wc -l) files, src/cli/ $cli lines)" ||
    { echo "check-rules: sizes: over the limits ($MAX_FILE_LINES lines a file, $MAX_FUNCTION_LINES a function, $MAX_CLI_LINES in src/cli/)"; failed=1; }
}

# --- 5. gpuclk-serve links no command code -------------------------------------------------
# The service's program (src/daemon) is built from src/serve and the layers below it: `gpuclk
# serve` parses the command line and hands it the result. A symbol of src/cli or src/tui in it
# means the service runs command code again.
check_links() {
  echo "check-rules: gpuclk-serve's code"
  local bin=${SERVE_BIN:-build/release/gpuclk-serve} found
  if [ ! -f "$bin" ]; then
    echo "$bin: not built (build gpuclk-serve, or set SERVE_BIN to it)"
    failed=1
    return
  fi
  found=$(nm -C "$bin" | grep -E ' gpuclk::(cli|tui)::' | head -5)
  if [ -n "$found" ]; then
    echo "$bin: links code of src/cli or src/tui (the service's program must not; docs/architecture.md):"
    echo "$found"
    failed=1
    return
  fi
  echo "check-rules: gpuclk-serve links no cli or tui code ok"
}

# --- 6. the protocol in src/serve/ only ---------------------------------------------------------
# An awk scanner of C++ text: comments are skipped (// and /* */ across lines) and string
# literals read whole (escapes, raw strings R"d(...)d" across lines, character literals, digit
# separators), so a "request" in a comment or inside a longer string is no request, while one
# in a raw or escaped JSON text is.
protocol_scanner() {
  cat <<'AWK'
function report(why) { if (!reported) print FILENAME ":" FNR ": " why; reported = 1 }
function request_in(body) {
  if (body == "request" || body ~ /\\"request\\"/ || body ~ /"request"/)
    report("\"request\": a request of the service's protocol built or read outside src/serve/ (ask through serve::Client's typed requests, serve/client.h)")
}
FNR == 1 { block = 0; in_raw = 0 }
{
  line = $0; n = length(line); i = 1; code = ""; reported = 0
  while (i <= n) {
    if (block) {
      j = index(substr(line, i), "*/")
      if (!j) break
      i += j + 1; block = 0; continue
    }
    if (in_raw) {
      stop = ")" delim "\""
      j = index(substr(line, i), stop)
      request_in(j ? substr(line, i, j - 1) : substr(line, i))
      if (!j) break
      i += j - 1 + length(stop); in_raw = 0; continue
    }
    c = substr(line, i, 1)
    two = substr(line, i, 2)
    if (two == "//") break
    if (two == "/*") { block = 1; i += 2; continue }
    if (c == "\"") {
      k = i - 1
      while (k >= 1 && substr(line, k, 1) ~ /[A-Za-z0-9_]/) k--
      prefix = substr(line, k + 1, i - 1 - k)
      if (prefix == "R" || prefix == "u8R" || prefix == "uR" || prefix == "UR" || prefix == "LR") {
        j = index(substr(line, i + 1), "(")
        delim = j ? substr(line, i + 1, j - 1) : ""
        in_raw = 1
        i += j + 1; continue
      }
      j = i + 1
      while (j <= n) {
        d = substr(line, j, 1)
        if (d == "\\") { j += 2; continue }
        if (d == "\"") break
        j++
      }
      request_in(substr(line, i + 1, j - i - 1))
      code = code "\"\""
      i = j + 1; continue
    }
    if (c == "'") {
      if (i > 1 && substr(line, i - 1, 1) ~ /[A-Za-z0-9_]/) { i++; continue }  # 1'000
      j = i + 1
      while (j <= n) {
        d = substr(line, j, 1)
        if (d == "\\") { j += 2; continue }
        if (d == "'") break
        j++
      }
      i = j + 1; continue
    }
    code = code c
    i++
  }
  if (code ~ /serve::[A-Za-z0-9_]*from_json[ \t]*\(/)
    report("an answer of the protocol decoded outside src/serve/ (serve::Client's typed requests decode it, serve/messages.h)")
}
AWK
}

check_protocol() {
  echo "check-rules: the protocol in src/serve/ only"
  local bad=0 hit
  while IFS= read -r hit; do
    echo "$hit"
    bad=1
  done < <(git ls-files -- 'src/*' | grep -E '\.(cpp|h|hpp|cc|inc)$' | grep -v '^src/serve/' |
    xargs -r awk "$(protocol_scanner)")
  [ $bad -eq 0 ] && echo "check-rules: the protocol in src/serve/ only ok" || failed=1
}

for c in $CHECKS; do
  case $c in
    links) check_links ;;
    includes) check_includes ;;
    format) check_format ;;
    tidy) check_tidy ;;
    sizes) check_sizes ;;
    protocol) check_protocol ;;
    *) echo "check-rules: unknown check '$c' (includes, format, tidy, sizes, protocol, links)"; exit 2 ;;
  esac
done
exit $failed
