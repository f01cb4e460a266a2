"""Compares gpuclk's NVLink fields with `nvidia-smi nvlink -s` and `nvidia-smi nvlink -e`.

argv: the output of `nvidia-smi nvlink -s`, of `nvidia-smi nvlink -e`, and gpuclk's
`query --fields index,nvlink.link_count,nvlink.active,nvlink.version,nvlink.speed,
nvlink.bandwidth,nvlink.errors.replay,nvlink.errors.recovery,nvlink.errors.crc,nvlink.errors.ecc
--format csv,noheader,nounits`. Prints a Markdown table per GPU; exit 1 if a figure differs.
nvidia-smi's layout differs between drivers, so the parsing only relies on "GPU N:" headers,
"Link N:" and "<name> Errors: <count>" / "<speed> GB/s".
"""
import re
import sys


def lines_by_gpu(path):
    """(GPU index, line) for each line under a "GPU N:" header of nvidia-smi's output."""
    gpu = None
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"\s*GPU (\d+):", line)
        if m:
            gpu = int(m.group(1))
            yield gpu, None
        elif gpu is not None:
            yield gpu, line


def parse_status(path):
    """GPU -> {link: speed GB/s or None when inactive}."""
    gpus = {}
    for gpu, line in lines_by_gpu(path):
        links = gpus.setdefault(gpu, {})
        m = re.match(r"\s*Link (\d+):\s*(.*)", line or "")
        if m:
            speed = re.search(r"([\d.]+)\s*GB/s", m.group(2))
            links[int(m.group(1))] = float(speed.group(1)) if speed else None
    return gpus


def parse_errors(path):
    """GPU -> {kind: sum over links}; kind is replay, recovery, crc or ecc."""
    gpus = {}
    for gpu, line in lines_by_gpu(path):
        counts = gpus.setdefault(gpu, {})
        for name, count in re.findall(r"([A-Za-z][A-Za-z ]*?)\s*Errors?\s*:\s*(\d+)", line or ""):
            low = name.lower()
            kind = ("replay" if "replay" in low else "recovery" if "recovery" in low else
                    "crc" if "crc" in low else "ecc" if "ecc" in low else None)
            if kind:
                counts[kind] = counts.get(kind, 0) + int(count)
    return gpus


def main():
    status, errors = parse_status(sys.argv[1]), parse_errors(sys.argv[2])
    differ = 0
    print("| GPU | figure | nvidia-smi | gpuclk | same |")
    print("|---|---|---|---|---|")
    for line in open(sys.argv[3]):
        f = [x.strip() for x in line.split(",")]
        if len(f) < 10:
            continue
        g = int(f[0])
        links = status.get(g, {})
        up = [s for s in links.values() if s is not None]
        rows = [("links", str(len(links)), f[1]), ("links up", str(len(up)), f[2]),
                ("speed per link GB/s", "%.3f" % up[0] if up else "N/A", f[4]),
                ("bandwidth GB/s", "%.1f" % sum(up) if up else "N/A", f[5])]
        for i, kind in enumerate(("replay", "recovery", "crc", "ecc")):
            smi = errors.get(g, {}).get(kind)
            rows.append(("errors " + kind, "N/A" if smi is None else str(smi), f[6 + i]))
        for name, a, b in rows:
            if name == "errors ecc" and a == "N/A":
                # nvidia-smi nvlink -e prints replay, recovery and CRC only (driver 580); NVML's
                # NVML_NVLINK_ERROR_DL_ECC_DATA counts the DL ECC errors.
                print("| %d | %s | not printed | %s | - |" % (g, name, b))
                continue
            # Speeds agree to their printed digits; counts exactly.
            tolerance = 0.06 if name.endswith("GB/s") else 0
            try:
                same = abs(float(a) - float(b)) <= tolerance
            except ValueError:
                same = a.lower() == b.lower() or (a == "N/A" and b.startswith("["))
            differ += not same
            print("| %d | %s | %s | %s | %s |" % (g, name, a, b, "yes" if same else "NO"))
    print("\n%d figure(s) differ" % differ)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
