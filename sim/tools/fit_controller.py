#!/usr/bin/env python3
"""Fits the power controller's lag (GpuSpec::power_controller_time_constant_s, the H200 model's
[power] controller_time_constant_s) on the mixed phases of docs/results/raw/power_mixed_h200.json.

For each time constant of a grid it writes a copy of sim/scenarios with that value in the H200
model file, runs `gpuclk_sim_calibration --mixed` on it and scores the fitted cases (0.3 s and
0.9 s on: rate, mean SM clock and mean power, squared percent errors). The 0.6 s case and the
GEMM/copy alternation are held out: printed, never scored.

    python3 sim/tools/fit_controller.py build/release/sim/tools/gpuclk_sim_calibration
"""
import pathlib, re, shutil, subprocess, sys, tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
FITTED = ("0.3 s on", "0.9 s on")
CASES = (("0.3 s on", "0.3 on"), ("0.6 s on", "0.6 on (held out)"), ("0.9 s on", "0.9 on"),
         ("copy 1 GiB", "GEMM/copy (held out)"))


def errors(table):
    out = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 7 or "memory-scope" in cells[2] or "%" not in cells[5]:
            continue
        for key, _ in CASES:
            if key in cells[1]:
                out.setdefault(key, []).append(float(cells[5].replace("%", "")))
    return out


def main():
    tool = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else
                        ROOT / "build/release/sim/tools/gpuclk_sim_calibration")
    best = None
    with tempfile.TemporaryDirectory() as tmp:
        scen = pathlib.Path(tmp) / "scenarios"
        shutil.copytree(ROOT / "sim/scenarios", scen)
        model = scen / "models/h200-sxm-141gb.toml"
        text = model.read_text()
        for ms in range(0, 101, 5):
            tau = ms / 1000
            model.write_text(re.sub(r"(?m)^controller_time_constant_s = .*$",
                                    "controller_time_constant_s = %g" % tau, text))
            run = subprocess.run([str(tool), "--mixed", str(scen / "h200-power-mixed.toml"),
                                  str(ROOT / "docs/results/raw/power_mixed_h200.json")],
                                 capture_output=True, text=True)
            e = errors(run.stdout)
            score = sum(x * x for k in FITTED for x in e[k])
            print("tau %.3f s  fit %6.2f  " % (tau, score) + "  ".join(
                "%s [%s]" % (label, " ".join("%+.1f" % x for x in e[key])) for key, label in CASES))
            if best is None or score < best[0]:
                best = (score, tau)
    print("best: controller_time_constant_s = %g (rate, mean clock, mean power errors in %%)" % best[1])


if __name__ == "__main__":
    main()
