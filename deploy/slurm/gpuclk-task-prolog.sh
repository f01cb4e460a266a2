#!/usr/bin/env bash
# Slurm TaskProlog (slurmd runs it as the job's user before each task; slurm.conf: TaskProlog=):
# for sites that set NCCL_INSPECTOR_ROOT in /etc/gpuclk/slurm.conf, turns the NCCL Inspector (NCCL's
# profiler plugin) on for the task, writing into NCCL_INSPECTOR_ROOT/JOBID, the directory the
# prolog made for the job and `gpuclk serve --nccl-inspector-dir NCCL_INSPECTOR_ROOT` reads:
# collectives per job on /metrics, in `gpuclk ps`/`stat --job`, and doctor's communication rules
# (docs/nccl.md). Slurm reads "export NAME=VALUE" lines of its output into the task's environment.
# A job that set NCCL_PROFILER_PLUGIN itself keeps its own; nothing here ever fails the task.
set -u
# shellcheck source=deploy/slurm/gpuclk-slurm-common.sh
. "$(dirname "$(readlink -f "$0")")/gpuclk-slurm-common.sh" 2>/dev/null || exit 0

[ -n "$NCCL_INSPECTOR_ROOT" ] || exit 0
[ -n "${NCCL_PROFILER_PLUGIN:-}" ] && exit 0 # the job's own profiler plugin
dir="$NCCL_INSPECTOR_ROOT/$JOB_ID"
[ -d "$dir" ] && [ -w "$dir" ] || exit 0 # the prolog made none (the plugin would write elsewhere)
[ -r "$NCCL_INSPECTOR_PLUGIN" ] || exit 0
echo "export NCCL_PROFILER_PLUGIN=$NCCL_INSPECTOR_PLUGIN"
echo "export NCCL_INSPECTOR_ENABLE=1"
echo "export NCCL_INSPECTOR_DUMP_DIR=$dir"
# The plugin writes at the end of the job unless given an interval; the job's own one stays.
[ -n "${NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS:-}" ] ||
  echo "export NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=$NCCL_INSPECTOR_INTERVAL_US"
exit 0
