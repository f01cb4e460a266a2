#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_argv (tests/fuzz/corpus/argv) from gpuclk's own --help: for
every option of every command (and subcommand), a valid value, a boundary value and a bad one,
plus each command bare and with the global options. One argument vector per file, NUL-separated.
  tests/fuzz/make_argv_corpus.py build/release/gpuclk tests/fuzz/corpus/argv
"""
import hashlib
import os
import re
import subprocess
import sys

GLOBALS = ["-i", "--id", "--format", "--nvml-lib", "--sim", "--read-only", "--state-dir",
           "--socket", "--direct"]

# (valid, boundary, bad) by a word in the option's name; the first match wins.
BY_NAME = [
    ("format", ["json", "csv,noheader,nounits", "xml"]),
    ("power", ["300", "4295617.296", "nan"]),
    ("clock", ["1410", "100000", "100001"]),
    ("interval", ["100ms", "10ms", "0"]),
    ("delay", ["1", "0.01", "-1"]),
    ("duration", ["30s", "0.01", "1e400"]),
    ("range", ["1h", "366d", "-1h"]),
    ("timeout", ["10s", "0.1", "3601"]),
    ("slowdown", ["3%", "100%", "101%"]),
    ("count", ["10", "0", "-1"]),
    ("repeat", ["3", "1", "0"]),
    ("iterations", ["2", "1", "0"]),
    ("seconds", ["1", "0", "nan"]),
    ("warmup", ["0.5", "0", "-1"]),
    ("regs", ["32", "255", "2147483647"]),
    ("threads", ["256", "1024", "1025"]),
    ("shared", ["48K", "0", "1T"]),
    ("device", ["0", "4095", "18446744073709551616"]),
    ("id", ["0,1", "GPU-", ""]),
    ("arch", ["sm_90", "sm_121", "sm_49"]),
    ("kernel", ["gemm*", "[!a-z]", "[" * 2000]),
    ("select", ["pucvmet", "p", "zz"]),
    ("selector", ['{job="gpuclk"}', "{}", '{job="'] ),
    ("prometheus", ["http://127.0.0.1:1", "https://h", "ftp://x"]),
    ("policy", ["phase", "bandit", "nope"]),
    ("knee", ["default", "pessimistic", "x"]),
    ("apply-best", ["min_energy", "knee", "best"]),
    ("workload", ["gemm-bf16", "mem", "x"]),
    ("rules", ["power_cap", "power_cap,thermal_slowdown", ","]),
    ("explain", ["power_cap", "thermal_slowdown", "nope"]),
    ("sim", ["default", "misconfigured", "/dev/zero"]),
    ("listen", ["127.0.0.1:9400", "off", ":99999"]),
    ("amount", ["1T", "1", "-1"]),
    ("metric", ["tokens/s", "", "("]),
]
FILES = ["/dev/null", "/nonexistent/x", "/dev/zero"]
FILE_WORDS = ("json", "out", "file", "log", "report", "batch", "binary", "ptxas", "scenario",
              "state-dir", "socket", "nvml-lib", "-f")
DEFAULT = ["1", "0", "x" * 300]


def values_for(name, typ):
    for word, values in BY_NAME:
        if word in name:
            return values
    if any(w in name for w in FILE_WORDS):
        return FILES
    if typ == "INT":
        return ["1", "0", "-9223372036854775809"]
    if typ in ("FLOAT", "FLOAT:NUMBER"):
        return ["1.5", "0", "nan"]
    return DEFAULT


def help_of(gpuclk, path):
    out = subprocess.run([gpuclk, *path, "--help"], capture_output=True, text=True).stdout
    options, subs, section = [], [], None
    for line in out.splitlines():
        if line.startswith("Options:"):
            section = "options"
        elif line.startswith("Subcommands:"):
            section = "subs"
        elif line.startswith("Global options"):
            section = None
        elif section == "options":
            m = re.match(r"  (-[-\w,]+)(?: (\w[\w:]*))?", line)
            if m and "--help" not in m.group(1):
                names = m.group(1).split(",")
                options.append((names[-1], names[0], m.group(2)))
        elif section == "subs":
            m = re.match(r"  ([a-z][\w-]*)\s", line)
            if m:
                subs.append(m.group(1))
    return options, subs


def main():
    gpuclk, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    vectors = [[], ["--help"], ["--version"], ["--sim"], ["--sim", "stauts"], ["stauts"],
               ["-i", "", "set", "--power-limit", "600"], ["--", "status"]]
    _, commands = help_of(gpuclk, [])
    todo = [[c] for c in commands]
    while todo:
        path = todo.pop(0)
        options, subs = help_of(gpuclk, path)
        todo += [path + [s] for s in subs]
        vectors += [path, path + ["--help"], ["--sim", "-i", "0", "--format", "json", *path]]
        for long, short, typ in options:
            if typ is None:
                vectors.append(path + [long])
                continue
            for v in values_for(long, typ):
                vectors.append(path + [long, v])
            if short != long:
                vectors.append(path + [short, values_for(long, typ)[0]])
    vectors += [["stat", "--", "true"], ["sweep", "--sm-clocks", "810:1980:90", "--", "true"],
                ["occupancy", "--arch", "sm_90", "--threads", "256", "--regs", "64"],
                ["occupancy", "--arch", "sm_80", "--sweep"], ["occupancy", "--list-archs"],
                ["doctor", "--explain", "power_cap"], ["bench", "compare", "/dev/null", "/dev/null"]]
    seen = set()
    for v in vectors:
        data = "\0".join(v).encode()
        name = hashlib.sha1(data).hexdigest()[:16]
        if name in seen:
            continue
        seen.add(name)
        with open(os.path.join(outdir, name), "wb") as f:
            f.write(data)
    print(f"{len(seen)} argument vectors in {outdir}")


if __name__ == "__main__":
    main()
