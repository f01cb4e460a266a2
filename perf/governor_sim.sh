#!/usr/bin/env bash
# The governor's evaluation on the simulator (docs/govern.md): every policy and the per-phase
# oracle on sim/scenarios/governor/*, under the model's memory knee and a pessimistic one.
# Writes docs/results/governor_sim.md (tables, goals checked), governor_sim.json (the raw
# --evaluate output of both knees) and governor_sim.svg (energy saved vs slowdown, gnuplot).
# Usage: perf/governor_sim.sh [GPUCLK_BINARY] [OUT_DIR]
set -euo pipefail
bin=${1:-build/release/gpuclk}
out=${2:-docs/results}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for knee in default pessimistic; do
  "$bin" govern --evaluate --knee "$knee" --format json >"$tmp/$knee.json"
  "$bin" govern --evaluate --knee "$knee" >"$tmp/$knee.txt"
done
jq -n --slurpfile d "$tmp/default.json" --slurpfile p "$tmp/pessimistic.json" \
  '{default: $d[0], pessimistic: $p[0]}' >"$out/governor_sim.json"

# One data block per knee for gnuplot: scenario policy slowdown% saved%.
for knee in default pessimistic; do
  jq -r '.scenarios[] | (.scenario | split("/") | last | rtrimstr(".toml")) as $s |
         .results[] | select(.policy != "none") |
         "\($s) \(.policy) \(.slowdown_ratio * 100) \(.energy_saved_ratio * 100)"' \
    "$tmp/$knee.json" >"$tmp/$knee.dat"
done
gnuplot <<GP
set terminal svg size 1500,640 font "sans,10"
set output "$out/governor_sim.svg"
set multiplot layout 2,5 title "gpuclk govern --evaluate: energy saved vs slowdown, per scenario (against the driver's default; 3 % budget)"
set grid
set xlabel "slowdown (%)"
set ylabel "energy saved (%)"
set key bottom right font ",8"
set xrange [-0.3:3.5<*]
policies = "threshold geopm phase bandit oracle"
scenarios = "bursty-service compute-fp32 llm-inference stencil training-loop"
do for [k in "default pessimistic"] {
  do for [s=1:words(scenarios)] {
    set title word(scenarios,s)." (".k." knee)"
    set arrow 1 from 3, graph 0 to 3, graph 1 nohead dashtype 2
    plot for [p=1:words(policies)] "< awk '\$1==\"".word(scenarios,s)."\" && \$2==\"".word(policies,p)."\"' $tmp/".k.".dat" \
         using 3:4 with points pt (p+4) ps 1.5 title word(policies,p)
  }
}
unset multiplot
GP

table() {  # knee → markdown table
  jq -r '.scenarios[] | (.scenario | split("/") | last | rtrimstr(".toml")) as $s |
         (.results[] | select(.policy == "oracle") | .energy_saved_ratio) as $o |
         .results[] |
         "| \($s) | \(.policy) | \(.energy_joules | floor) | \(.time_seconds * 100 | round / 100) | \(.energy_saved_ratio * 1000 | round / 10) | \(.slowdown_ratio * 1000 | round / 10) | \(($o - .energy_saved_ratio) * 1000 | round / 10) |"' "$tmp/$1.json"
}
# Goals (issue #12), checked per knee; one line per goal with the figures.
goals() {
  jq -r '
    def r($s; $p): (.scenarios[] | select(.scenario | endswith("/" + $s + ".toml")) | .results[] | select(.policy == $p));
    def pct: . * 1000 | round / 10 | tostring + " %";
    def mark($ok): if $ok then "met" else "**NOT met**" end;
    ( ["stencil", "llm-inference"][] as $s | ["phase", "bandit"][] as $p | r($s; $p) as $x | r($s; "oracle") as $o |
      "| memory-bound-heavy \($s), \($p): ≥ 25 % saved at ≤ 3 % slowdown, within 3 points of the oracle | saved \($x.energy_saved_ratio | pct), slowdown \($x.slowdown_ratio | pct), oracle \($o.energy_saved_ratio | pct) | \(mark($x.energy_saved_ratio >= 0.25 and $x.slowdown_ratio <= 0.03 and ($o.energy_saved_ratio - $x.energy_saved_ratio) <= 0.03)) |" ),
    ( ["phase", "bandit"][] as $p | r("compute-fp32"; $p) as $x |
      "| compute-bound compute-fp32, \($p): ≤ 1 % slowdown, no more energy | saved \($x.energy_saved_ratio | pct), slowdown \($x.slowdown_ratio | pct) | \(mark($x.slowdown_ratio <= 0.01 and $x.energy_saved_ratio >= 0)) |" ),
    ( .scenarios[] | (.scenario | split("/") | last | rtrimstr(".toml")) as $s |
      [.results[] | {key: .policy, value: .}] | from_entries as $r |
      ["phase", "bandit"][] as $p | ["threshold", "geopm"][] as $q |
      ($r[$p].energy_saved_ratio >= $r[$q].energy_saved_ratio and $r[$p].slowdown_ratio <= $r[$q].slowdown_ratio + 0.001) as $ok |
      "| \($s): \($p) beats \($q) on energy at equal or lower slowdown | \($p) saved \($r[$p].energy_saved_ratio | pct) at \($r[$p].slowdown_ratio | pct); \($q) \($r[$q].energy_saved_ratio | pct) at \($r[$q].slowdown_ratio | pct) | \(mark($ok)) |" )
  ' "$tmp/$1.json"
}

# Where phase or bandit slows more than threshold or geopm (so "equal or lower slowdown" cannot
# hold), the same scenario again with the budget set to that policy's measured slowdown: what it
# saves at the other's slowdown. One markdown row per pair.
at_their_slowdown() {  # knee
  jq -r '.scenarios[] | .scenario as $path | [.results[] | {key: .policy, value: .}] | from_entries as $r |
         ["phase", "bandit"][] as $p | ["threshold", "geopm"][] as $q |
         select($r[$p].slowdown_ratio > $r[$q].slowdown_ratio + 0.001) |
         "\($path) \($p) \($q) \($r[$q].slowdown_ratio) \($r[$q].energy_saved_ratio)"' "$tmp/$1.json" |
  while read -r path p q slow saved; do
    budget=$(awk -v s="$slow" 'BEGIN { printf "%.2f", s * 100 }')
    "$bin" govern --evaluate --knee "$1" --scenario "$path" --max-slowdown "${budget}%" --format json |
      jq -r --arg p "$p" --arg q "$q" --argjson slow "$slow" --argjson saved "$saved" --arg b "$budget" '
        def pct: . * 1000 | round / 10 | tostring + " %";
        .scenarios[0] | (.scenario | split("/") | last | rtrimstr(".toml")) as $s |
        (.results[] | select(.policy == $p)) as $x |
        ($x.energy_saved_ratio >= $saved and $x.slowdown_ratio <= $slow + 0.001) as $ok |
        "| \($s): \($p) with --max-slowdown \($b) % (\($q)'"'"'s slowdown) | \($p) saved \($x.energy_saved_ratio | pct) at \($x.slowdown_ratio | pct); \($q) \($saved | pct) at \($slow | pct) | \(if $ok then "met" else "**NOT met**" end) |"'
  done
}

{
  echo "# Governor evaluation on the simulator"
  echo
  echo "Produced by \`perf/governor_sim.sh\` (which runs \`gpuclk govern --evaluate --knee default|pessimistic --format json\`"
  echo "on every scenario in \`sim/scenarios/governor/\`, 3 passes of each repeating workload, 20 ms interval,"
  echo "3 % slowdown budget). Simulated H100 SXM5; energy is the GPU's, from the workload's start to its end."
  echo "Ratios are against \`none\` (the driver's default clocks); the gap is the oracle's saving minus the policy's,"
  echo "in points. Plot: [governor_sim.svg](governor_sim.svg); raw output: [governor_sim.json](governor_sim.json)."
  for knee in default pessimistic; do
    echo
    echo "## ${knee} memory knee"
    echo
    echo "| scenario | policy | energy J | time s | saved % | slowdown % | gap to oracle (points) |"
    echo "|---|---|---:|---:|---:|---:|---:|"
    table "$knee"
    echo
    echo "\`gpuclk govern --evaluate --knee $knee\` (table form; \"Idle-gap saved\" is the energy of the"
    echo "workload's idle phases with the context held against \`none\`; the goal is ≥ 30 %):"
    echo
    echo '```'
    cat "$tmp/$knee.txt"
    echo '```'
    echo
    echo "| goal (issue #12) | figures | |"
    echo "|---|---|---|"
    goals "$knee"
    echo
    echo "Where \`phase\` or \`bandit\` saves more but also slows more than \`threshold\` or \`geopm\`, the"
    echo "same scenario with the budget set to the other policy's measured slowdown (\`--max-slowdown\`):"
    echo
    echo "| at the other's slowdown | figures | |"
    echo "|---|---|---|"
    at_their_slowdown "$knee"
  done
} >"$out/governor_sim.md"
echo "wrote $out/governor_sim.md, governor_sim.json, governor_sim.svg"
