#!/usr/bin/env bash
# gpuclk sweep on the simulator: a BF16 clock sweep on one GPU and on 4 at once, a power-limit
# sweep, the best points against what the H100 model's parameters imply (computed here from
# sim/scenarios/models/h100-sxm5-80gb.toml, not copied from the output), the plots, restore (at
# the end, after SIGTERM, after kill -9), bad ranges, a command failing at one point, and the
# time goal (12 points in < 30 s wall). Simulated time runs 40x faster than the wall clock (a
# third of that in sanitized builds, as doctor_test.sh: there a stall of the process is 3x as long,
# and each is that many simulated seconds of a point's window).
source "$(dirname "$0")/lib.sh" "$1"
export GPUCLK_SIM_SPEED=$(slowed 40)
MODEL="$(dirname "$0")/../../sim/scenarios/models/h100-sxm5-80gb.toml"
fresh_node() { rm -rf "$GPUCLK_SIM_STATE" "$GPUCLK_SIM_STATE.lock" "$GPUCLK_SIM_STATE.gen" "$GPUCLK_STATE_DIR"; }
# within PCT a b: |a - b| <= PCT % of b
within() { awk -v a="$2" -v b="$3" -v p="$1" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= p / 100 * b) }'; }
# model KEY: a number from the H100 model file ("sm_count", or "bf16" inside a { } table with KEY2)
model() { grep -E "^$1 *=" "$MODEL" | head -1 | sed -E 's/^[^=]*= *//; s/ *#.*//'; }
# svg_text_apart SVG: every horizontal text gnuplot wrote (tick labels, titles, keys) lies inside
# the canvas and overlaps no other, its box taken as 0.62 of the font size per character (wider
# than sans's widest average) by 1.05 of it high.
svg_text_apart() {
  check
  local bad
  bad=$(python3 - "$1" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
W = float(re.search(r'width="(\d+)"', svg).group(1))
H = float(re.search(r'height="(\d+)"', svg).group(1))
boxes = []
for m in re.finditer(r'<g transform="translate\(([\d.-]+),([\d.-]+)\)([^"]*)"[^>]*'
                     r'font-size="([\d.]+)"[^>]*text-anchor="(\w+)"[^>]*>\s*<text>(.*?)</text>',
                     svg, re.S):
    x, y, size, text = float(m.group(1)), float(m.group(2)), float(m.group(4)), m.group(6)
    if "rotate" in m.group(3) or not text.strip():
        continue
    w = len(text) * size * 0.62
    x0 = {"start": x, "middle": x - w / 2, "end": x - w}[m.group(5)]
    box = (x0, y - size * 0.8, x0 + w, y + size * 0.25, text)
    if box[0] < 0 or box[2] > W or box[1] < 0 or box[3] > H:
        print(f"'{text}' leaves the {W:g}x{H:g} canvas (x {box[0]:.0f}-{box[2]:.0f}, y {box[1]:.0f}-{box[3]:.0f})")
    for o in boxes:
        if box[0] < o[2] and o[0] < box[2] and box[1] < o[3] and o[1] < box[3]:
            print(f"'{text}' overlaps '{o[4]}'")
    boxes.append(box)
PY
)
  [ -z "$bad" ] || fail "$1: $bad"
}
model_in() { model "$1" | tr -d '{}' | tr ',' '\n' | grep -E "^ *$2 *=" | sed -E 's/.*= *//'; }
# settings [SCENARIO]: every GPU's settings on the default simulated node, or on SCENARIO's
settings() {
  gpuclk --sim ${1:+"$1"} query --query-gpu=index,persistence_mode,compute_mode,ecc.mode.current,clocks.applications.graphics,clocks.applications.memory,power.limit --format=csv,noheader
}

SMS=$(model sm_count)
FLOP_PER_CLK=$(model_in flop_per_clock_per_sm bf16)
EFF=$(model_in efficiency bf16)
# The voltage curve's floor ends at the second knot: below it, power falls slower than the clock.
V_FLOOR_MHZ=$(model voltage_curve | sed -E 's/^\[\[[^]]*\], *\[([0-9]+),.*/\1/')
check; [ -n "$SMS" ] && [ -n "$FLOP_PER_CLK" ] && [ -n "$EFF" ] && [ -n "$V_FLOOR_MHZ" ] ||
  fail "cannot read the model parameters from $MODEL ($SMS, $FLOP_PER_CLK, $EFF, $V_FLOOR_MHZ)"

# The best points' tests run on an idle 4x H100 node with ideal heat sinks (the fixture says why);
# its GPU 0 is a plain H100 at the default 700 W limit.
CAPPED="$(cd "$(dirname "$0")" && pwd)/fixtures/sweep-capped-gpu.toml"

# --- BF16 clock sweep on one GPU, 810-1980 MHz: 14 points, in < 30 s wall ---
fresh_node
settings "$CAPPED"; BEFORE=$OUT
start=$(date +%s.%N)
gpuclk --sim "$CAPPED" --format json sweep -i 0 --sm-clocks 810:1980:90 --workload gemm-bf16 --warmup 1 --duration 3 --out "$TEST_TMP/bf16"
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
expect_exit 0
JSON_BF16=$OUT
expect_json '.points | length' 15          # the baseline and 14 points
expect_json '.rate_unit' "TFLOP/s"
expect_json '.data' "random"  # the data its power assumes: the simulated job's phases move random values
expect_json '[.points[] | select(.error != null)] | length' 0
expect_json '.restored' true
echo "BF16 sweep, 15 points on 1 GPU: $elapsed s wall"
# Below the power-capped clock the rate is the model's: efficiency x FLOP/clk/SM x SMs x f.
for f in 810 990 1170 1350; do
  rate=$(jq -r ".points[] | select(.requested_sm_mhz == $f) | .rate" <<<"$OUT")
  expected=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" -v f="$f" 'BEGIN { print e * c * s * f * 1e6 / 1e12 }')
  check; within 1.5 "$rate" "$expected" || fail "BF16 at $f MHz: $rate TFLOP/s, the model says $expected"
  med=$(jq -r ".points[] | select(.requested_sm_mhz == $f) | .median_sm_mhz" <<<"$OUT")
  check; [ "$med" == "$f" ] || fail "BF16 locked at $f MHz ran at $med MHz"
done
# Above it the 700 W cap holds the clock: flat rate, the lock is only a ceiling (said so).
cap=$(jq -r '.points[] | select(.requested_sm_mhz == 1980) | .median_sm_mhz' <<<"$OUT")
# The card: 1410 MHz at 56 C (docs/calibration.md), 1358 at 72 C (power_by_data_h100.md).
check; [ "$cap" -ge 1350 ] && [ "$cap" -le 1425 ] ||
  fail "BF16 at 1980 MHz ran at $cap MHz; the H100 held 1358-1410 under its 700 W cap"
expect_json '.points[] | select(.requested_sm_mhz == 1980) | .held_below_lock' true
expect_json '.points[] | select(.requested_sm_mhz == 810) | .held_below_lock' false
r1980=$(jq -r '.points[] | select(.requested_sm_mhz == 1980) | .rate' <<<"$OUT")
r1530=$(jq -r '.points[] | select(.requested_sm_mhz == 1530) | .rate' <<<"$OUT")
check; within 1 "$r1530" "$r1980" || fail "BF16 rate not flat above the cap: $r1530 vs $r1980"
top=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" -v f="$cap" 'BEGIN { print e * c * s * f * 1e6 / 1e12 }')
check; within 1.5 "$r1980" "$top" || fail "BF16 capped rate $r1980, the model at $cap MHz says $top"
# Best points. Max throughput: the lowest lock at or above the capped clock (same rate, less
# asked). The knee: the grid point at or just above the voltage floor (below it power falls
# slower than the clock; above it V^2 f falls faster than throughput). Min energy per work and
# min EDP from the measured curve, recomputed here; the point within 5 % of the top rate.
mt=$(jq -r '.best.max_throughput.requested_sm_mhz' <<<"$OUT")
expected_mt=$(awk -v c="$cap" 'BEGIN { for (f = 810; f <= 1980; f += 90) if (f >= c - 15) { print f; exit } }')
check; [ "$mt" == "$expected_mt" ] || fail "max_throughput at $mt MHz, expected $expected_mt (capped at $cap)"
knee=$(jq -r '.best.knee.requested_sm_mhz' <<<"$OUT")
expected_knee=$(awk -v v="$V_FLOOR_MHZ" 'BEGIN { for (f = 810; f <= 1980; f += 90) if (f >= v) { print f; exit } }')
check; awk -v k="$knee" -v e="$expected_knee" 'BEGIN { exit !(k >= e - 90 && k <= e) }' ||
  fail "knee at $knee MHz; the voltage floor ends at $V_FLOOR_MHZ MHz (expected $expected_knee or one step below)"
# Ties within 0.5 % go to the lowest setting. The settings the cap holds (held_below_lock, at the
# top) are one operating point, their mean, named by the lowest of them; the setting just below
# joins it when it ran as fast as the run's slowest clock. (Their points differ by more than
# 0.5 % when the die warms over the sweep: on a loaded machine one point's simulated window
# runs long.)
LOWEST='def ops: [.points[] | select(.baseline | not)] | sort_by(.requested_sm_mhz) as $p
    | ([$p | to_entries[] | select(.value.held_below_lock | not) | .key] | max // -1) as $b
    | ($p[$b + 1:]) as $run
    | (if ($run | length) > 0 and $b >= 0 and $p[$b].median_sm_mhz >= ($run | map(.median_sm_mhz) | min) - 0.5
       then $b - 1 else $b end) as $last
    | ($p[$last + 1:]) as $group
    | [$p[:$last + 1][] | {requested_sm_mhz, energy_per_work, rate}]
      + (if ($group | length) > 0 then [{requested_sm_mhz: $group[0].requested_sm_mhz,
           energy_per_work: ($group | map(.energy_per_work) | add / length),
           rate: ($group | map(.rate) | add / length)}] else [] end);
  def lowest(f): (map(f) | min) as $m | map(select(f <= $m * 1.005)) | min_by(.requested_sm_mhz) | .requested_sm_mhz;'
min_e=$(jq -r "$LOWEST"' ops | lowest(.energy_per_work)' <<<"$OUT")
expect_json '.best.min_energy.requested_sm_mhz' "$min_e"
min_edp=$(jq -r "$LOWEST"' ops | lowest(.energy_per_work / .rate)' <<<"$OUT")
expect_json '.best.min_edp.requested_sm_mhz' "$min_edp"
# The tie rule is said where the result is shown (issue 32: the plot circled 1170 MHz while 1260
# was lower): least_at in JSON, a note, and the plot's label name where the least value was.
strict_edp=$(jq -r "$LOWEST"' ops | min_by(.energy_per_work / .rate) | .requested_sm_mhz' <<<"$OUT")
if [ "$strict_edp" != "$min_edp" ]; then
  expect_json '.best.min_edp.least_at' "$strict_edp"
  expect_json "[.notes[] | select(startswith(\"min_edp is $min_edp MHz, the lowest setting within 0.5 % of the least energy x delay (at $strict_edp MHz)\"))] | length" 1
  check; grep -q "min_edp: $min_edp MHz (least at $strict_edp)" "$TEST_TMP/bf16/sweep.gp" || fail "the plot's key does not say min_edp's least was at $strict_edp: $(grep keyentry "$TEST_TMP/bf16/sweep.gp" | head -1)"
else
  expect_json '.best.min_edp.least_at' "null"
fi
expect_json '([.best[] | select(.least_at != null)] | length) == ([.notes[] | select(test("the lowest setting within 0.5 % of the least"))] | length)' true
# The best points are markers named in the key below each panel, with their settings: no text
# inside the plot, where labels overlapped each other, the curves and the title on a flat curve
# (issue 42); every text of the SVG inside the canvas and clear of every other.
check; ! grep -qE "with labels|set label" "$TEST_TMP/bf16/sweep.gp" || fail "sweep.gp writes text inside the plot: $(grep -E "with labels|set label" "$TEST_TMP/bf16/sweep.gp" | head -2)"
check; grep -q "^set key outside below" "$TEST_TMP/bf16/sweep.gp" || fail "sweep.gp's key is not below the plots"
for kind in max_throughput min_energy min_edp min_energy_within_slowdown knee; do
  at=$(jq -r ".best.$kind.requested_sm_mhz" <<<"$OUT")
  check; [ "$(grep -c "<text>$kind: $at MHz" "$TEST_TMP/bf16/sweep.svg")" -eq 4 ] || fail "the SVG's keys do not name $kind at $at MHz in each panel"
done
svg_text_apart "$TEST_TMP/bf16/sweep.svg"
check; grep -q "lowest setting within 0.5 % of the least value" "$TEST_TMP/bf16/sweep.gp" || fail "the plot's title does not state the tie rule"
check; awk -v m="$min_e" -v v="$V_FLOOR_MHZ" 'BEGIN { exit !(m >= v - 180 && m <= v + 180) }' ||
  fail "min energy per work at $min_e MHz; the model puts it near the voltage floor ($V_FLOOR_MHZ MHz)"
within5=$(jq -r "$LOWEST"' ops | (map(.rate) | max) as $top | map(select(.rate >= 0.95 * $top)) | lowest(.energy_per_work)' <<<"$OUT")
expect_json '.best.min_energy_within_slowdown.requested_sm_mhz' "$within5"
rel=$(jq -r '.best.min_energy.energy_vs_baseline' <<<"$OUT")
check; awk -v r="$rel" 'BEGIN { exit !(r < 0.9) }' || fail "min energy only $rel of the baseline's per TFLOP"
# Plots: valid PNG and SVG of 1200x900 with the GPU's series and the best points.
png="$TEST_TMP/bf16/sweep.png"; svg="$TEST_TMP/bf16/sweep.svg"
check; [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ] || fail "$png is not a PNG"
dims=$(od -An -tu1 -j16 -N8 "$png" | awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }')
check; [ "$dims" == "1200x900" ] || fail "PNG is $dims, expected 1200x900"
check; grep -q '<svg' "$svg" && grep -q 'width="1200"' "$svg" && grep -q 'height="900"' "$svg" || fail "$svg is not a 1200x900 SVG"
check; [ "$(grep -c '<text>GPU 0</text>' "$svg")" -eq 4 ] || fail "SVG lacks the GPU 0 series in each of the 4 panels"
check; [ "$(grep -c 'gnuplot_plot_1[a-d]' "$svg")" -ge 4 ] || fail "SVG lacks the plotted series"
check; [ "$(grep -c '^0 ' "$TEST_TMP/bf16/sweep.dat")" -eq 14 ] || fail "sweep.dat lacks the 14 points"
check; jq -e '.points | length == 15' "$TEST_TMP/bf16/sweep.json" >/dev/null || fail "sweep.json"
check; [ "$(wc -l <"$TEST_TMP/bf16/sweep.csv")" -eq 16 ] || fail "sweep.csv: header + 15 rows"
# Restored: every setting as before, the journal empty.
settings "$CAPPED"
[ "$OUT" == "$BEFORE" ] || fail "settings after the sweep differ:
$OUT
vs
$BEFORE"
gpuclk --sim "$CAPPED" journal
expect_out "no GPU changed by gpuclk is recorded"

# --- Time goal: 12 points (no baseline), 1 s warm-up + 2 s measured each, < 30 s wall ---
fresh_node
start=$(date +%s.%N)
gpuclk --sim sweep -i 1 --sm-clocks 1980:1155:-75 --workload gemm-bf16 --warmup 1 --duration 2 --no-baseline
expect_exit 2   # a negative step is refused
expect_err "STEP"
# Empty values name nothing (issue 42: "give one of --sm-clocks ...", and --out '' wrote nothing
# without a word); a window under 1 s gets no energy, so no best point: said before it runs.
gpuclk --sim sweep -i 1 --sm-clocks '' --workload gemm-bf16
expect_exit 2; expect_err "--sm-clocks '': no clock named"
gpuclk --sim sweep -i 1 --power-limits '' --workload gemm-bf16
expect_exit 2; expect_err "--power-limits '': no limit named"
gpuclk --sim sweep -i 1 --sm-clocks 1410 --workload gemm-bf16 --out ''
expect_exit 2; expect_err "--out '': no directory named"
gpuclk --sim sweep -i 1 --sm-clocks 1410 --workload gemm-bf16 --duration 0.5
expect_exit 2; expect_err "--duration 0.5: a window shorter than 1 s gets no energy"
# One point: gnuplot's "empty x range" warnings go to its log, not to the terminal.
if command -v gnuplot >/dev/null; then
  gpuclk --sim sweep -i 1 --sm-clocks 1410 --workload gemm-bf16 --warmup 0 --duration 1 --no-baseline --out "$TEST_TMP/one"
  expect_exit 0; expect_out "sweep.png"
  check; ! grep -q "Warning: empty" <<<"$ERR" || fail "gnuplot's warnings on the terminal: $ERR"
fi
gpuclk --sim sweep -i 1 --sm-clocks 1980:1155:75 --workload gemm-bf16 --warmup 1 --duration 2 --no-baseline
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
expect_exit 0
expect_out "Best points"
expect_out_re "max_throughput +[0-9]+ "
# How long it took is reported, not asserted: on an idle machine ~14 s (its goal, < 30 s, is
# perf's to check), on a loaded 2-core CI box anything (36 s was seen).
echo "12-point sweep: $elapsed s of wall time"
echo "12-point BF16 sweep: $elapsed s wall"

# --- --apply-best: the chosen point stays locked, journaled; read-only refuses ---
gpuclk --sim --format json sweep -i 1 --sm-clocks 990,1080,1410 --workload gemm-bf16 --warmup 0.5 --duration 1 --apply-best min_energy
expect_exit 0
best=$(jq -r '.best.min_energy.requested_sm_mhz' <<<"$OUT")
gpuclk --sim --format json journal
expect_json '.gpus[0].applied.locked_gpu_clocks.max_mhz' "$best"
gpuclk --sim restore
expect_exit 0
gpuclk --sim --read-only sweep -i 1 --sm-clocks 990 --workload gemm-bf16 --apply-best knee
expect_exit 4

# --- The same BF16 sweep on 4 GPUs at once ---
fresh_node
settings; BEFORE=$OUT
gpuclk --sim --format json sweep --concurrent --sm-clocks 990,1410,1980 --workload gemm-bf16 --warmup 1 --duration 2 --out "$TEST_TMP/four"
expect_exit 0
expect_json '.points | length' 16
expect_json '[.points[].gpu] | unique | length' 4
for g in 0 1 2 3; do
  rate=$(jq -r ".points[] | select(.gpu == $g and .requested_sm_mhz == 990) | .rate" <<<"$OUT")
  expected=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" 'BEGIN { print e * c * s * 990e6 / 1e12 }')
  check; within 1.5 "$rate" "$expected" || fail "GPU $g at 990 MHz: $rate TFLOP/s, the model says $expected"
done
node=$(jq -r '.best.max_throughput.rate' <<<"$OUT")
at=$(jq -r '.best.max_throughput.requested_sm_mhz' <<<"$OUT")
sum=$(jq -r "[.points[] | select(.requested_sm_mhz == $at) | .rate] | add" <<<"$OUT")
check; within 0.5 "$node" "$sum" || fail "the node's max throughput $node is not the sum over GPUs $sum"
check; [ "$(grep -c '<text>GPU [0-3]</text>' "$TEST_TMP/four/sweep.svg")" -eq 16 ] || fail "SVG lacks 4 GPU series per panel"
settings
[ "$OUT" == "$BEFORE" ] || fail "settings after the 4-GPU sweep differ: $OUT vs $BEFORE"

# --- Per-GPU best points: GPU 2 of 4 capped at 500 W (tests/cli/fixtures/sweep-capped-gpu.toml) ---
# Each GPU's expected best points come from the H100 model's power equation (docs/simulator.md,
# "Power"), evaluated here from the model file's parameters and the GPU's power limit: the clock
# the cap allows is the highest 15 MHz step whose power fits, with the die between a cold heat sink
# and its steady state (the two bounds give the accepted answers). The fixture's sinks are ideal
# (cooling_factor 0): the two bounds are one, and each point's power its own, whatever ran before.
LIMIT2=$(grep -A3 '^index = 2' "$CAPPED" | sed -nE 's/^power_limit_w *= *([0-9.]+).*/\1/p')
COOLING=$(sed -nE 's/^cooling_factor *= *([0-9.]+).*/\1/p' "$CAPPED")
INTENSITY=$(grep -E '\{"gemm-bf16",' "$(dirname "$0")/../../sim/model/job.cpp" | sed -E 's/^[^,]*,[^,]*,[^,]*, *([0-9.]+),.*/\1/')
VCURVE=$(model voltage_curve | tr -d '[],' | tr -s ' ')
# expected_best LIMIT_W: "KIND=VALUE|VALUE ..." for max_throughput, min_energy,
# min_energy_within_slowdown (5 %), knee, over the grid 810:1980:90
expected_best() {
  awk -v limit="$1" -v vc="$VCURVE" -v sms="$SMS" -v fpc="$FLOP_PER_CLK" -v eff="$EFF" -v inten="$INTENSITY" \
    -v fmax="$(model sm_max_mhz)" -v pstat="$(model static_w)" -v tref="$(model static_reference_c)" \
    -v leak="$(model leakage_w_per_c)" -v memif="$(model memory_interface_w)" -v ctree="$(model clock_tree_w)" \
    -v full="$(model_in pipe_full_w bf16)" -v busy="$(model_in pipe_busy_w bf16)" -v ldst="$(model load_store_full_w)" \
    -v pj="$(model dram_picojoules_per_byte)" -v bw="$(model memory_bandwidth_gb_s)" -v amb="$(model ambient_c)" \
    -v rdie="$(model die_k_per_w)" -v rsink="$(model sink_k_per_w)" -v cooling="$COOLING" -v vfloor="$V_FLOOR_MHZ" '
    function V(f,   i) { for (i = 1; i < nk; i++) if (f <= kf[i + 1]) return kv[i] + (kv[i + 1] - kv[i]) * (f - kf[i]) / (kf[i + 1] - kf[i]); return kv[nk] }
    function rate(f) { return eff * fpc * sms * f * 1e6 }
    # power at clock f with the die at amb + k x P (solved for P: leakage depends on it)
    function P(f, k,   d, b, a) { d = (V(f) / V(fmax)) ^ 2 * f / fmax; b = rate(f) / inten
      a = pstat + memif + d * (ctree + busy + (full - busy) * eff + ldst * b / (bw * 1e9)) + pj * 1e-12 * b
      return (a + leak * (amb - tref)) / (1 - leak * k) }
    function cap(k,   f, c) { c = 0; for (f = 345; f <= fmax; f += 15) if (P(f, k) <= limit) c = f; return c }
    function add(kind, v) { if (index(" " got[kind] " ", " " v " ") == 0) got[kind] = got[kind] (got[kind] == "" ? "" : " ") v }
    BEGIN {
      n = split(vc, t, " "); nk = n / 2; for (i = 1; i <= nk; i++) { kf[i] = t[2 * i - 1]; kv[i] = t[2 * i] }
      for (b = 0; b < 2; b++) {
        k = b == 0 ? rdie : rdie + rsink * cooling; c = cap(k)
        mt = ""; w5 = ""; me = ""; emin = 1e99; kn = ""
        for (f = 810; f <= 1980; f += 90) {
          ran = f < c ? f : c
          if (mt == "" && ran >= 0.995 * c) mt = f
          if (w5 == "" && ran >= 0.95 * c) w5 = f
          e[f] = P(ran, k) / rate(ran); if (e[f] < emin) emin = e[f]
          if (kn == "" && f >= vfloor) kn = f
        }
        for (f = 810; f <= 1980; f += 90) if (me == "" && e[f] <= emin * 1.005) me = f
        add("max_throughput", mt); add("min_energy_within_slowdown", w5); add("min_energy", me)
        add("knee", kn); add("knee", kn - 90); add("cap", c)
      }
      for (kind in got) printf "%s=%s\n", kind, got[kind]
    }'
}
# one_of VALUE "A B": VALUE is one of them
one_of() { [[ " $2 " == *" $1 "* ]]; }
check; [ -n "$LIMIT2" ] && [ -n "$INTENSITY" ] && [ -n "$COOLING" ] ||
  fail "cannot read GPU 2's limit ($LIMIT2), the sinks' cooling factor ($COOLING) or the job's intensity ($INTENSITY)"
E700=$(expected_best "$(model limit_default_w)"); E2=$(expected_best "$LIMIT2")
echo "expected at $(model limit_default_w) W: $(echo $E700); at $LIMIT2 W: $(echo $E2)"
expected_of() { sed -nE "s/^$2=//p" <<<"$1"; }
fresh_node
# 6 simulated seconds a point (0.15 s of wall time at 40x): a few ms of wall time between a counter
# read and its time stamp (a loaded machine, a sanitized build) are 0.1-0.2 simulated seconds, up
# to 5-10 % of a 2 s window's mean power, a third of that here (seen: 2 % low over a 10 s window);
# the best points' ties are 0.5 %.
gpuclk --sim "$CAPPED" sweep --concurrent --sm-clocks 810:1980:90 --workload gemm-bf16 --warmup 1 --duration 6 --out "$TEST_TMP/capped" \
  --apply-best max_throughput --per-gpu
expect_exit 0
expect_out "Best points per GPU"
TABLE=$OUT
OUT=$(cat "$TEST_TMP/capped/sweep.json")
expect_json '.best_per_gpu | keys | join(",")' "0,1,2,3"
# curve_of GPU: its points, to show why a best point differs
curve_of() { jq -r ".points[] | select(.gpu == $1) | \"\(.requested_sm_mhz // \"base\") \(.energy_per_work) \(.power_w) \(.seconds) \(.temperature_c)\"" <<<"$OUT" | paste -sd';'; }
for g in 0 1 2 3; do
  E=$E700; [ $g -eq 2 ] && E=$E2
  held=$(jq -r ".points[] | select(.gpu == $g and .requested_sm_mhz == 1980) | .median_sm_mhz" <<<"$OUT")
  caps=$(expected_of "$E" cap)
  check; awk -v h="$held" -v c="$caps" 'BEGIN { n = split(c, a, " "); for (i = 1; i <= n; i++) if (h >= a[i] - 15 && h <= a[i] + 15) exit 0; exit 1 }' ||
    fail "GPU $g held at $held MHz under its cap; the model allows $caps MHz"
  for kind in max_throughput min_energy min_energy_within_slowdown knee; do
    got=$(jq -r ".best_per_gpu[\"$g\"].$kind.requested_sm_mhz" <<<"$OUT")
    check; one_of "$got" "$(expected_of "$E" $kind)" ||
      fail "GPU $g's $kind point is $got MHz; the model says $(expected_of "$E" $kind); its points (MHz J/TFLOP W s C): $(curve_of $g)"
  done
done
# GPU 2 stands out, and the notes say so with the values found above.
mt0=$(jq -r '.best_per_gpu["0"].max_throughput.requested_sm_mhz' <<<"$OUT")
mt2=$(jq -r '.best_per_gpu["2"].max_throughput.requested_sm_mhz' <<<"$OUT")
check; [ "$mt2" -lt "$mt0" ] || fail "the capped GPU's max_throughput ($mt2) is not below the others' ($mt0)"
expect_json '[.best_per_gpu[] | .max_throughput.requested_sm_mhz] | unique | length' 2
expect_json ".notes | index(\"GPU 2's max_throughput point is $mt2 MHz, the others' $mt0 MHz\") != null" true
OUT=$TABLE
expect_out "note: GPU 2's max_throughput point is $mt2 MHz, the others' $mt0 MHz"
# The plots mark each GPU's best points on its own curve; the key names GPU 2's own setting.
got=$(awk '/^# max_throughput$/ { f = 1; next } /^#/ { f = 0 } f && $1 == 2 { print $2 }' "$TEST_TMP/capped/best.dat")
check; [ "$got" == "$mt2" ] || fail "best.dat marks GPU 2's max_throughput at '$got', expected $mt2: $(cat "$TEST_TMP/capped/best.dat")"
check; [ "$(awk '/^# max_throughput$/ { f = 1; next } /^#/ { f = 0 } f && NF' "$TEST_TMP/capped/best.dat" | wc -l)" -eq 4 ] || fail "best.dat lacks a max_throughput point per GPU"
check; [ "$(grep -c "<text>max_throughput: $mt0 MHz (GPU 2: $mt2)</text>" "$TEST_TMP/capped/sweep.svg")" -eq 4 ] || fail "the SVG's keys do not name GPU 2's max_throughput in each panel"
svg_text_apart "$TEST_TMP/capped/sweep.svg"
# The node's curve is the sum: its max throughput is where the last GPU stops gaining.
OUT=$(cat "$TEST_TMP/capped/sweep.json")
expect_json '.best.max_throughput.requested_sm_mhz' "$mt0"
# --apply-best --per-gpu locked each GPU at its own point (journaled); restore undoes it.
gpuclk --sim "$CAPPED" --format json journal
expect_json '[.gpus[] | "\(.index):\(.applied.locked_gpu_clocks.max_mhz)"] | join(",")' "0:$mt0,1:$mt0,2:$mt2,3:$mt0"
gpuclk --sim "$CAPPED" restore
expect_exit 0
gpuclk --sim "$CAPPED" journal
expect_out "no GPU changed by gpuclk is recorded"
gpuclk --sim "$CAPPED" sweep --sm-clocks 990 --workload gemm-bf16 --per-gpu
expect_exit 2; expect_err "--per-gpu chooses which best point --apply-best applies"

# --- Power-limit sweep 200-700 W: the clock follows the limit, the rate with it ---
fresh_node
gpuclk --sim --format json sweep -i 2 --power-limits 200:700:100 --workload gemm-bf16 --warmup 1 --duration 2
expect_exit 0
expect_json '.axis' "power_limit"
expect_json '[.points[] | select(.baseline | not) | .requested_power_limit_w] | join(",")' "200,300,400,500,600,700"
for w in 300 500 700; do
  p=$(jq -r ".points[] | select(.requested_power_limit_w == $w) | .power_w" <<<"$OUT")
  check; awk -v p="$p" -v w="$w" 'BEGIN { exit !(p <= w * 1.02 && p >= w * 0.9) }' || fail "at a $w W limit the GPU drew $p W"
done
c300=$(jq -r '.points[] | select(.requested_power_limit_w == 300) | .median_sm_mhz' <<<"$OUT")
c700=$(jq -r '.points[] | select(.requested_power_limit_w == 700) | .median_sm_mhz' <<<"$OUT")
check; awk -v a="$c300" -v b="$c700" 'BEGIN { exit !(a < b) }' || fail "clock at 300 W ($c300) not below 700 W ($c700)"
r300=$(jq -r '.points[] | select(.requested_power_limit_w == 300) | .rate' <<<"$OUT")
expected=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" -v f="$c300" 'BEGIN { print e * c * s * f * 1e6 / 1e12 }')
check; within 2 "$r300" "$expected" || fail "at 300 W: $r300 TFLOP/s at $c300 MHz, the model says $expected"
expect_json '.best.max_throughput.requested_power_limit_w' 700
gpuclk --sim query -i 2 --query-gpu=power.limit --format=csv,noheader
expect_out "700.00 W"

# --- Restore: SIGTERM mid-sweep restores at once; kill -9 leaves it to `gpuclk restore` ---
fresh_node
gpuclk --sim set -i 3 --power-limit 650   # an original that is not the default
expect_exit 0
settings; BEFORE=$OUT
# 13 points of 31 simulated seconds: ~10 s of wall time at 40x, so the SIGTERM at 2 s always
# lands mid-sweep (with 4 s points the sweep could end first on an idle machine: exit 0).
"$GPUCLK_BIN" --sim sweep -i 3 --sm-clocks 990:1980:90 --workload gemm-bf16 --warmup 1 --duration 30 \
  >"$TEST_TMP/term.out" 2>"$TEST_TMP/term.err" &
pid=$!
sleep 2; kill -TERM $pid; wait $pid; RC=$?
LAST_CMD="sweep (SIGTERM)"; OUT=$(cat "$TEST_TMP/term.out"); ERR=$(cat "$TEST_TMP/term.err")
expect_exit 143
expect_err "interrupted"
settings
[ "$OUT" == "$BEFORE" ] || fail "settings after SIGTERM differ: $OUT vs $BEFORE"
gpuclk --sim --format json journal
expect_json '.gpus | length' 1   # the earlier `set` stays journaled, nothing of the sweep
expect_json '.gpus[0].applied.power_limit_mw' 650000

gpuclk --sim --format json journal
LOCK='.gpus[0].applied.locked_gpu_clocks | if type == "object" then .max_mhz else "none" end'
expect_json "$LOCK" none   # no lock before (the SIGTERM run put it back to the driver's default)
"$GPUCLK_BIN" --sim sweep -i 3 --sm-clocks 990:1980:90 --workload gemm-bf16 --warmup 1 --duration 3 \
  >/dev/null 2>&1 &
pid=$!
# Kill it mid-sweep: once the journal shows a point's lock applied (at most 10 s).
locked=none
for _ in $(seq "$(scaled 100)"); do
  locked=$("$GPUCLK_BIN" --sim --format json journal 2>/dev/null | jq -r "$LOCK")
  [ "$locked" != none ] && break
  sleep 0.1
done
kill -KILL $pid; wait $pid 2>/dev/null
check; [ "$locked" != none ] || fail "the sweep applied no lock within 10 s"
gpuclk --sim --format json journal
expect_json "($LOCK) >= 990" true   # the point's lock outlived the sweep
expect_json '.gpus[0].touched | index("locked_gpu_clocks") != null' true
gpuclk --sim restore
expect_exit 0
settings
expect_out "3, Enabled, Default, Enabled, 1980 MHz, 2619 MHz, 700.00 W"   # restore goes back before the `set`
gpuclk --sim journal
expect_out "no GPU changed by gpuclk is recorded"

# --- Bad ranges ---
fresh_node
gpuclk --sim sweep -i 0 --sm-clocks 800:1980:90 --workload gemm-bf16
expect_exit 2; expect_err "SM clock 800 MHz is not a supported clock of GPU 0 (nearest: 795 MHz or 810 MHz; supported: 345–1980 MHz, step 15, 110 values)"
gpuclk --sim sweep -i 0 --sm-clocks 810:2100:90 --workload gemm-bf16
expect_exit 2; expect_err "outside GPU 0's supported clocks"
gpuclk --sim sweep -i 0 --power-limits 100:700:100 --workload gemm-bf16
expect_exit 2; expect_err "power limit 100 W is outside GPU 0's range (200 W–700 W)"
gpuclk --sim sweep -i 0 --sm-clocks 810:x:90 --workload gemm-bf16
expect_exit 2; expect_err "'x' is not a number"
gpuclk --sim sweep -i 0 --sm-clocks 810:1980:100 --workload gemm-bf16   # a step off the 15 MHz grid
expect_exit 2; expect_err "SM clock 910 MHz is not a supported clock of GPU 0 (nearest: 900 MHz or 915 MHz; supported: 345–1980 MHz, step 15, 110 values)"
gpuclk --sim sweep -i 0 --sm-clocks 810:1980 --workload gemm-bf16
expect_exit 2; expect_err "A:B:STEP"
gpuclk --sim sweep -i 0 --sm-clocks 990 --workload gemm-int3
expect_exit 2; expect_err "unknown --workload 'gemm-int3'"
gpuclk --sim sweep -i 0 --sm-clocks 990 --power-limits 300 --workload gemm-bf16
expect_exit 2
gpuclk --sim sweep -i 0 --sm-clocks 990 --workload gemm-bf16 --max-slowdown 150%
expect_exit 2
gpuclk --sim --read-only sweep -i 0 --sm-clocks 990 --workload gemm-bf16
expect_exit 4
gpuclk --sim --format json sweep -i 0 --sm-clocks 800,1000 --snap --workload gemm-bf16 --warmup 0.5 --duration 1 --no-baseline
expect_exit 0
expect_json '[.points[].requested_sm_mhz] | join(",")' "795,1005"
# (besides the snaps, a tie rule's note when the two points' values come within 0.5 %)
expect_json '[.notes[] | select(test("snapped"))] | length' 2

# --- A command that fails at one point: reported, the sweep goes on; --fail-fast stops ---
fresh_node
cat >"$TEST_TMP/job.sh" <<JOB
#!/usr/bin/env bash
# fails at its second run (the sweep's second point)
n=\$(( \$(cat "$TEST_TMP/runs" 2>/dev/null || echo 0) + 1 )); echo \$n >"$TEST_TMP/runs"
[ \$n -eq 2 ] && { echo "simulated failure" >&2; exit 3; }
exec gpuclk sim-job --workload gemm-bf16 --amount 2000T
JOB
chmod +x "$TEST_TMP/job.sh"
export PATH="$GPUCLK_BIN_DIR:$PATH"
gpuclk --sim --format json sweep -i 0 --sm-clocks 990,1410,1980 --metric 'gemm-bf16 +[0-9.]+ +[0-9.]+ +([0-9.]+)' --metric-unit TFLOP --no-baseline -- "$TEST_TMP/job.sh"
expect_exit 255
expect_json '[.points[] | .error // "ok"] | join(",")' "ok,the command exited with status 3,ok"
expect_json '.points[1].rate' null   # no work done: no rate (N/A), not 0 or 1 run/s
r990=$(jq -r '.points[0].rate' <<<"$OUT")
expected=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" 'BEGIN { print e * c * s * 990e6 / 1e12 }')
check; within 2 "$r990" "$expected" || fail "sim-job's own rate at 990 MHz: $r990, the model says $expected"
rm -f "$TEST_TMP/runs"
gpuclk --sim --format json sweep -i 0 --sm-clocks 990,1410,1980 --no-baseline --fail-fast -- "$TEST_TMP/job.sh"
expect_exit 255
expect_json '.points | length' 2
expect_json '.failed_fast' true
expect_json '.rate_unit' "run/s"
gpuclk --sim journal
expect_out "no GPU changed by gpuclk is recorded"

# --- --repeat N with a command: N runs per point inside the window ---
# With --metric the point's rate is the mean of the N printed rates: this job prints 10, 20, 30,
# … on its successive runs, so the first point's runs print 10, 20, 30 (mean 20), the second's
# 40, 50, 60 (mean 50). Its fifth run fails: the second point reports it and the sweep goes on.
fresh_node
rm -f "$TEST_TMP/runs"
cat >"$TEST_TMP/printer.sh" <<JOB
#!/usr/bin/env bash
n=\$(( \$(cat "$TEST_TMP/runs" 2>/dev/null || echo 0) + 1 )); echo \$n >"$TEST_TMP/runs"
[ "\$FAIL_AT" == "\$n" ] && exit 3
echo "rate \$(( n * 10 ))"
JOB
chmod +x "$TEST_TMP/printer.sh"
gpuclk --sim --format json sweep -i 1 --sm-clocks 990,1410 --no-baseline --repeat 3 --metric 'rate ([0-9]+)' --metric-unit item -- "$TEST_TMP/printer.sh"
expect_exit 0
expect_json '.repeat' 3
expect_json '[.points[].runs] | join(",")' "3,3"
expect_json '[.points[].rate] | join(",")' "20,50"
expect_json '.points[0].run_rates | join(",")' "10,20,30"
expect_json '.points[1].run_rates | join(",")' "40,50,60"
expect_json '[.points[].rate_spread] | join(",")' "1,0.4"       # (max - min) / rate
expect_json '.workload | endswith("(3 runs per point)")' true
expect_json '.data' "the command's own"  # what a command moves is its own business
rm -f "$TEST_TMP/runs"
FAIL_AT=5 gpuclk --sim --format json sweep -i 1 --sm-clocks 990,1410,1980 --no-baseline --repeat 3 --metric 'rate ([0-9]+)' -- "$TEST_TMP/printer.sh"
expect_exit 255
expect_json '[.points[] | .error // "ok"] | join(",")' "ok,run 2 of 3: the command exited with status 3,ok"
expect_json '[.points[].runs] | join(",")' "3,2,3"    # the failing run ends its point
expect_json '.points[2].run_rates | join(",")' "60,70,80"
check; [ "$(cat "$TEST_TMP/runs")" -eq 8 ] || fail "the command ran $(cat "$TEST_TMP/runs") times, expected 3 + 2 + 3"
# Without --metric: N runs over the wall time of all of them; the table says how many runs.
gpuclk --sim --format json sweep -i 1 --sm-clocks 990 --no-baseline --repeat 2 -- gpuclk sim-job --workload gemm-bf16 --amount 500T
expect_exit 0
expect_json '.points[0].runs' 2
expect_json '.points[0].run_rates | length' 2
# (seconds is printed to the millisecond: ~2.1 s carries up to 2.4e-4 of rounding)
expect_json '.points[0] | ((.rate - .runs / .seconds) | fabs) < 1e-3 * .rate' true
# each run takes at least the model's time for its 500 TFLOP at 990 MHz
expected=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" 'BEGIN { print e * c * s * 990e6 / 1e12 / 500 }')
expect_json "[.points[0].run_rates[] | . <= $expected * 1.02] | all" true
gpuclk --sim sweep -i 1 --sm-clocks 990 --no-baseline --repeat 2 -- true
expect_exit 0
expect_out_re "Runs +Spread %"
expect_out_re " 990 +[0-9]+ +[0-9.]+ +2 "
# SIGTERM mid-point ends it there (the signal reaches the running command too), no further run
# starts, the settings are restored, exit 143.
"$GPUCLK_BIN" --sim --format json sweep -i 1 --sm-clocks 990,1410 --no-baseline --repeat 50 -- sleep 0.2 \
  >"$TEST_TMP/rterm.out" 2>"$TEST_TMP/rterm.err" &
pid=$!
# Once a run of the point has started (before, the signal would end gpuclk before its handler).
for _ in $(seq "$(scaled 100)"); do pgrep -P "$pid" -x sleep >/dev/null && break; sleep 0.1; done
kill -TERM $pid; wait $pid; RC=$?
LAST_CMD="sweep --repeat 50 (SIGTERM)"; OUT=$(cat "$TEST_TMP/rterm.out"); ERR=$(cat "$TEST_TMP/rterm.err")
expect_exit 143
expect_json '.interrupted' true
expect_json '.points | length' 1
expect_json '.points[0].error | test("^(interrupted after [0-9]+ of 50 runs|run [0-9]+ of 50: the command was killed by signal 15.*)$")' true
expect_json '.points[0].runs < 50' true
gpuclk --sim journal
expect_out "no GPU changed by gpuclk is recorded"
# --duration/--warmup time a workload's window: with a command they are refused, not ignored.
gpuclk --sim sweep -i 1 --sm-clocks 990 --duration 3 -- true
expect_exit 2; expect_err "--duration times --workload's measured window"; expect_err "--repeat N"
gpuclk --sim sweep -i 1 --sm-clocks 990 --warmup 1 --repeat 2 -- true
expect_exit 2; expect_err "--warmup"
gpuclk --sim sweep -i 1 --sm-clocks 990 --repeat 0 --workload gemm-bf16
expect_exit 2; expect_err "--repeat 0: need at least 1 run per point"

# --- --repeat N with --workload: N measured windows of --duration after one warm-up ---
started=$EPOCHREALTIME
gpuclk --sim --format json sweep -i 1 --sm-clocks 990,1980 --workload gemm-bf16 --warmup 1 --duration 1 --repeat 3
# the simulated time that passed meanwhile: wall time x GPUCLK_SIM_SPEED
wall=$(awk -v a="$started" -v b="$EPOCHREALTIME" -v s="$GPUCLK_SIM_SPEED" 'BEGIN { printf "%.2f", (b - a) * s }')
expect_exit 0
expect_json '[.points[].runs] | join(",")' "3,3,3"
expect_json '[.points[] | .run_rates | length] | join(",")' "3,3,3"
expect_json '[.points[] | .rate == (.run_rates | sort | .[1])] | all' true   # the median
expect_json '[.points[] | .rate_spread < 0.02] | all' true
# 3 windows of 1 s each, within the simulated time the whole sweep took (a loaded machine
# stretches them; a fixed upper bound failed CI)
expect_json "[.points[] | .seconds >= 2.9 and .seconds < $wall] | all" true
r990=$(jq -r '.points[] | select(.requested_sm_mhz == 990) | .rate' <<<"$OUT")
expected=$(awk -v e="$EFF" -v c="$FLOP_PER_CLK" -v s="$SMS" 'BEGIN { print e * c * s * 990e6 / 1e12 }')
check; within 1.5 "$r990" "$expected" || fail "--repeat 3 at 990 MHz: $r990 TFLOP/s, the model says $expected"
gpuclk --sim journal
expect_out "no GPU changed by gpuclk is recorded"

finish
