#!/usr/bin/env python3
"""What reading NVLink state and counters costs on this host (pynvml), per GPU and call.

The figures decide how often gpuclk reads them (docs/telemetry.md): the state of each link, the
four DL error counters of each link, and the data counters of every link in one field-value read
(TX and RX per link: 2 x links fields) or one field at a time. Read-only.
usage: perf/nvlink_read_costs.py [REPEATS]
"""
import statistics
import sys
import time

import pynvml as n

REPEATS = int(sys.argv[1]) if len(sys.argv) > 1 else 20


def timed(fn, repeats=REPEATS):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            fn()
        except n.NVMLError as e:
            return "error: %s" % e
        out.append((time.perf_counter() - t0) * 1e3)
    return "median %.3f ms, max %.3f ms (%d calls)" % (statistics.median(out), max(out), len(out))


n.nvmlInit()
for g in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(g)
    links = []
    for k in range(n.NVML_NVLINK_MAX_LINKS):
        try:
            n.nvmlDeviceGetNvLinkState(h, k)
            links.append(k)
        except n.NVMLError:
            pass
    print("GPU %d: %d links" % (g, len(links)))
    print("  nvmlDeviceGetNvLinkState, one link:", timed(lambda: n.nvmlDeviceGetNvLinkState(h, 0)))
    for name, c in (("replay", n.NVML_NVLINK_ERROR_DL_REPLAY), ("recovery", n.NVML_NVLINK_ERROR_DL_RECOVERY),
                    ("crc", n.NVML_NVLINK_ERROR_DL_CRC_FLIT), ("ecc", getattr(n, "NVML_NVLINK_ERROR_DL_ECC_DATA", 3))):
        print("  nvmlDeviceGetNvLinkErrorCounter %s, one link:" % name,
              timed(lambda: n.nvmlDeviceGetNvLinkErrorCounter(h, 0, c)))
    tx, rx = n.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, n.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
    one = [(tx, 0)]
    every = [(f, k) for k in links for f in (tx, rx)]
    print("  nvmlDeviceGetFieldValues, 1 data field:", timed(lambda: n.nvmlDeviceGetFieldValues(h, one)))
    print("  nvmlDeviceGetFieldValues, %d data fields (TX, RX per link):" % len(every),
          timed(lambda: n.nvmlDeviceGetFieldValues(h, every), max(3, REPEATS // 4)))
    totals = [getattr(n, x) for x in ("NVML_FI_DEV_NVLINK_ECC_DATA_ERROR_COUNT_TOTAL",
                                      "NVML_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL",
                                      "NVML_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
                                      "NVML_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL") if hasattr(n, x)]
    if totals:
        print("  nvmlDeviceGetFieldValues, %d error totals (every link):" % len(totals),
              timed(lambda: n.nvmlDeviceGetFieldValues(h, totals)))
        vals = n.nvmlDeviceGetFieldValues(h, totals)
        print("    values:", [(v.fieldId, v.nvmlReturn, v.value.ullVal) for v in vals])
n.nvmlShutdown()
