#!/usr/bin/env bash
# The governor's evaluation on the simulator (docs/govern.md): every policy and the per-phase
# oracle on sim/scenarios/governor/*, under the model's memory knee and a pessimistic one.
# Writes docs/results/governor_sim.md (tables, goals checked), governor_sim.json (the raw
# --evaluate output of both knees, and of the default knee on zero data) and governor_sim.svg
# (energy saved vs slowdown, gnuplot). The scenarios' kernels move random data (what training
# data is closest to, and what draws the most power); `--input zeros` is the other end.
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
"$bin" govern --evaluate --input zeros --format json >"$tmp/zeros.json"
jq -n --slurpfile d "$tmp/default.json" --slurpfile p "$tmp/pessimistic.json" \
  --slurpfile z "$tmp/zeros.json" \
  '{default: $d[0], pessimistic: $p[0], default_zero_data: $z[0]}' >"$out/governor_sim.json"

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
  jq -r --slurpfile idle "$tmp/$1.idle.json" '
    def r($s; $p): (.scenarios[] | select(.scenario | endswith("/" + $s + ".toml")) | .results[] | select(.policy == $p));
    def pct: . * 1000 | round / 10 | tostring + " %";
    def mark($ok): if $ok then "met" else "**NOT met**" end;
    def name: split("/") | last | rtrimstr(".toml");
    ( ["stencil", "llm-inference"][] as $s | ["phase", "bandit"][] as $p | r($s; $p) as $x | r($s; "oracle") as $o |
      "| memory-bound-heavy \($s), \($p): ≥ 25 % saved at ≤ 3 % slowdown | saved \($x.energy_saved_ratio | pct), slowdown \($x.slowdown_ratio | pct) (the oracle: \($o.energy_saved_ratio | pct)) | \(mark($x.energy_saved_ratio >= 0.25 and $x.slowdown_ratio <= 0.03)) |" ),
    ( .scenarios[] | (.scenario | name) as $s | [.results[] | {key: .policy, value: .}] | from_entries as $r |
      ["phase", "bandit"][] as $p |
      ($r.oracle.energy_saved_ratio - $r[$p].energy_saved_ratio) as $gap |
      "| \($s), \($p): within 3 points of the oracle | \($gap * 1000 | round / 10) points (\($p) \($r[$p].energy_saved_ratio | pct), oracle \($r.oracle.energy_saved_ratio | pct)) | \(mark($gap <= 0.03)) |" ),
    ( $idle[0][] | select(.policy == "phase" or .policy == "bandit") |
      "| \(.scenario), \(.policy): idle gaps with the context held ≥ 30 % of their energy saved | \(.idle) % | \(mark(.idle >= 30)) |" ),
    ( ["phase", "bandit"][] as $p | r("compute-fp32"; $p) as $x |
      "| compute-bound compute-fp32, \($p): ≤ 1 % slowdown, no more energy | saved \($x.energy_saved_ratio | pct), slowdown \($x.slowdown_ratio | pct) | \(mark($x.slowdown_ratio <= 0.01 and $x.energy_saved_ratio >= 0)) |" ),
    ( .scenarios[] | (.scenario | name) as $s | (.results[] | select(.policy == "oracle")) as $o |
      "| \($s): the oracle within the 3 % budget | slowdown \($o.slowdown_ratio | pct) | \(mark($o.slowdown_ratio <= 0.03 + 1e-9)) |" )
  ' "$tmp/$1.json"
}

# "phase and bandit beat threshold and geopm on energy at equal or lower slowdown", per scenario:
# at the 3 % budget; where ours slows more than the other policy, the same scenario again with
# the budget set to the other's measured slowdown (--max-slowdown). One markdown row per pair;
# "scenario knee pair verdict" lines go to $tmp/beats.txt for the summary.
beats() {  # knee
  jq -r '.scenarios[] | .scenario as $path | [.results[] | {key: .policy, value: .}] | from_entries as $r |
         ["phase", "bandit"][] as $p | ["threshold", "geopm"][] as $q |
         "\($path) \($p) \($q) \($r[$p].energy_saved_ratio) \($r[$p].slowdown_ratio) \($r[$q].energy_saved_ratio) \($r[$q].slowdown_ratio)"' "$tmp/$1.json" |
  while read -r path p q saved slow their_saved their_slow; do
    s=$(basename "$path" .toml)
    pct() { awk -v x="$1" 'BEGIN { printf "%.2f %%", x * 100 }'; }
    direct=$(awk -v a="$saved" -v b="$slow" -v c="$their_saved" -v d="$their_slow" \
      'BEGIN { print (a >= c && b <= d + 0.001) ? "met" : (b > d + 0.001 ? "slower" : "less") }')
    at_theirs="—"
    verdict=$direct
    if [[ $direct != met ]]; then
      budget=$(awk -v s="$their_slow" 'BEGIN { printf "%.2f", s * 100 }')
      read -r x_saved x_slow < <("$bin" govern --evaluate --knee "$1" --scenario "$path" \
        --max-slowdown "${budget}%" --format json |
        jq -r --arg p "$p" '.scenarios[0].results[] | select(.policy == $p) | "\(.energy_saved_ratio) \(.slowdown_ratio)"')
      at_theirs="$(pct "$x_saved") at $(pct "$x_slow") (\`--max-slowdown ${budget}%\`)"
      verdict=$(awk -v a="$x_saved" -v b="$x_slow" -v c="$their_saved" -v d="$their_slow" \
        'BEGIN { print (a >= c && b <= d + 0.001) ? "met" : (b > d + 0.001 ? "slower" : "less") }')
    fi
    [[ $verdict == met ]] && mark=met || mark="**NOT met**"
    echo "| $s | $p vs $q | $(pct "$saved") at $(pct "$slow") | $(pct "$their_saved") at $(pct "$their_slow") | $at_theirs | $mark |"
    echo "$s $1 $p-$q $verdict" >>"$tmp/beats.txt"
  done
}

# The idle-gap column of the table form, as JSON: [{scenario, policy, idle}] (no idle phase: none).
idle_gaps() {  # knee
  awk 'NR > 1 && $NF != "" && $(NF-1) != "N/A" { print $1, $3, $(NF-1) }' "$tmp/$1.txt" |
    jq -R -s '[split("\n")[] | select(length > 0) | split(" ") | {scenario: .[0], policy: .[1], idle: (.[2] | tonumber)}]' \
    >"$tmp/$1.idle.json"
}

# The hand-written notes: everything from this heading on in the current file.
notes_heading="## Why the goals that are not met are not"
notes=""
if [[ -f $out/governor_sim.md ]]; then
  notes=$(awk -v h="$notes_heading" '$0 == h { on = 1 } on' "$out/governor_sim.md")
fi

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
    idle_gaps "$knee"
    echo "| goal (issue #12) | figures | |"
    echo "|---|---|---|"
    goals "$knee"
    echo
    echo "\`phase\` and \`bandit\` against \`threshold\` and \`geopm\`: energy at equal or lower slowdown. At"
    echo "the 3 % budget first; where that does not hold, the same scenario with the budget set to the"
    echo "other policy's measured slowdown (\`--max-slowdown\`; a slowdown within 0.1 point counts as equal):"
    echo
    echo "| scenario | pair | ours at 3 % | theirs | ours at their slowdown | |"
    echo "|---|---|---|---|---|---|"
    beats "$knee"
  done
  echo
  echo "## The same on zero data (default knee, \`--input zeros\`)"
  echo
  echo "Every phase's kernels moving zeros instead of random values: the same work at the same clocks"
  echo "draws less power (on the H100, a 1 GiB copy 401 W instead of 552 W; a BF16 GEMM 455 W at 1650 MHz"
  echo "instead of 698 W at 1358 MHz: [power_by_data_h100.md](power_by_data_h100.md)), so the phases differ"
  echo "in how much a lower clock saves. What the"
  echo "governor saves on the users' data is the random table above; this one is how far a benchmark on"
  echo "zeros would overstate or understate it."
  echo
  echo "| scenario | policy | energy J | time s | saved % | slowdown % | gap to oracle (points) |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  table zeros
  echo
  echo "| scenario | policy | saved %, random data | saved %, zeros | energy of \`none\`, zeros vs random |"
  echo "|---|---|---:|---:|---:|"
  jq -r -s '(.[0].scenarios | map({key: .scenario, value: .}) | from_entries) as $z |
    .[1].scenarios[] | .scenario as $s | ($z[$s].results | map({key: .policy, value: .}) | from_entries) as $zr |
    (.results[] | select(.policy == "none")) as $none |
    .results[] | select(.policy == "phase" or .policy == "bandit" or .policy == "oracle") |
    "| \($s | split("/") | last | rtrimstr(".toml")) | \(.policy) | \(.energy_saved_ratio * 1000 | round / 10) | \($zr[.policy].energy_saved_ratio * 1000 | round / 10) | \(($zr["none"].energy_joules / $none.energy_joules - 1) * 1000 | round / 10) % |"' \
    "$tmp/zeros.json" "$tmp/default.json"
  echo
  echo "## Per scenario and knee: do \`phase\` and \`bandit\` beat \`threshold\` and \`geopm\`?"
  echo
  echo "(met: at least as much energy saved at equal or lower slowdown, at the 3 % budget or with the"
  echo "budget set to the other's slowdown; less: it saves less there; slower: it slows more than the other"
  echo "even then.)"
  echo
  echo "| scenario | knee | phase vs threshold | phase vs geopm | bandit vs threshold | bandit vs geopm |"
  echo "|---|---|---|---|---|---|"
  for s in $(awk '{ print $1 }' "$tmp/beats.txt" | sort -u); do
    for knee in default pessimistic; do
      row="| $s | $knee |"
      for pair in phase-threshold phase-geopm bandit-threshold bandit-geopm; do
        v=$(awk -v s="$s" -v k="$knee" -v p="$pair" '$1 == s && $2 == k && $3 == p { print $4 }' "$tmp/beats.txt")
        [[ $v == met ]] && row+=" met |" || row+=" **NOT met** ($v) |"
      done
      echo "$row"
    done
  done
  # The notes (why the goals that are not met are not, with figures) are written by hand and
  # kept from the previous version of the file.
  if [[ -n $notes ]]; then
    echo
    printf '%s\n' "$notes"
  fi
} >"$out/governor_sim.md"
echo "wrote $out/governor_sim.md, governor_sim.json, governor_sim.svg"
