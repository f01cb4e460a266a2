#!/usr/bin/env python3
"""Prints every simulated GPU's settings, clock locks included, one line a GPU, from the
simulator's own state (gpuclk_sim_gpu_settings): what NVML cannot read back (locks) is decoded
too, so a fault test can compare the node before and after a fault byte for byte.
usage: sim_settings.py LIBNVML_SIM SCENARIO  (GPUCLK_SIM_STATE names the node's state file)"""
import ctypes
import os
import sys


class Settings(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint) for name in (
        "locked_sm_min_mhz", "locked_sm_max_mhz", "locked_memory_min_mhz",
        "locked_memory_max_mhz", "app_sm_mhz", "app_memory_mhz", "power_limit_mw",
        "persistence_mode")]


def main():
    lib_path, scenario = sys.argv[1], sys.argv[2]
    os.environ["GPUCLK_SIM_SCENARIO"] = scenario
    lib = ctypes.CDLL(lib_path)
    lib.gpuclk_sim_gpu_settings.argtypes = [ctypes.c_uint, ctypes.POINTER(Settings)]
    index = 0
    while True:
        s = Settings()
        if lib.gpuclk_sim_gpu_settings(index, ctypes.byref(s)) != 0:
            break
        lock = (f"{s.locked_sm_min_mhz}-{s.locked_sm_max_mhz}"
                if s.locked_sm_max_mhz else "none")
        mem_lock = (f"{s.locked_memory_min_mhz}-{s.locked_memory_max_mhz}"
                    if s.locked_memory_max_mhz else "none")
        print(f"GPU {index}: locked_sm={lock} locked_memory={mem_lock} "
              f"app={s.app_sm_mhz},{s.app_memory_mhz} power_limit_mw={s.power_limit_mw} "
              f"persistence={s.persistence_mode}")
        index += 1
    if index == 0:
        sys.exit(f"sim_settings: no GPU in {scenario}")


if __name__ == "__main__":
    main()
