# shellcheck shell=bash disable=SC2034  # the settings are used by the scripts that source this
# Shared by gpuclk-prolog.sh and gpuclk-epilog.sh (sourced; install beside them). Loads the
# settings, checks what slurmd passed, and logs to stderr (slurmd's log) and syslog.

gpuclk_slurm_conf=${GPUCLK_SLURM_CONF:-/etc/gpuclk/slurm.conf}
GPUCLK=/usr/local/bin/gpuclk
GPUCLK_OPTS=""
PROFILE_DIR=/etc/gpuclk/slurm-profiles
DEFAULT_PROFILE=default
STATE_BASE=/var/lib/gpuclk/slurm
REPORT_DIR=/var/log/gpuclk/jobs
REPORT_TO_OUTPUT_DIR=yes
STAT_INTERVAL=100ms
STOP_TIMEOUT=10
SCONTROL=scontrol
COMMENT_FROM_SCONTROL=no
ATTRIBUTION_WAIT=10
NCCL_INSPECTOR_ROOT=""
NCCL_INSPECTOR_PLUGIN=/usr/local/lib/libnccl-profiler-inspector.so
NCCL_INSPECTOR_INTERVAL_US=1000000

# log LEVEL MESSAGE...: one line "gpuclk-slurm[job N]: MESSAGE" on stderr and to syslog.
log() {
  local level=$1
  shift
  echo "gpuclk-slurm[job ${SLURM_JOB_ID:-?}] ${SLURM_SCRIPT_CONTEXT:-}: $*" >&2
  command -v logger >/dev/null 2>&1 &&
    logger -t gpuclk-slurm -p "daemon.$level" "[job ${SLURM_JOB_ID:-?}] $*" 2>/dev/null
  return 0
}

# The settings file is sourced as root: refuse one that anybody but root (or whoever runs this,
# in tests) owns or that others could have written.
if [ -f "$gpuclk_slurm_conf" ]; then
  read -r owner mode < <(stat -Lc '%u %A' "$gpuclk_slurm_conf")
  if [ "$owner" != 0 ] && [ "$owner" != "$(id -u)" ]; then
    log err "$gpuclk_slurm_conf is not owned by root; not using it"
    exit 1
  fi
  case "$mode" in
    ?????w???? | ????????w?)
      log err "$gpuclk_slurm_conf is writable by others than its owner; not using it"
      exit 1
      ;;
  esac
  # shellcheck source=deploy/slurm/gpuclk-slurm.conf
  . "$gpuclk_slurm_conf"
elif [ -n "${GPUCLK_SLURM_CONF:-}" ]; then
  log err "GPUCLK_SLURM_CONF names $GPUCLK_SLURM_CONF, which is not a file"
  exit 1
fi

case "${SLURM_JOB_ID:-}" in
  '' | *[!0-9]*)
    log err "SLURM_JOB_ID '${SLURM_JOB_ID:-}' is not a job id; run this from slurmd (Prolog=/Epilog=)"
    exit 1
    ;;
esac
JOB_ID=$SLURM_JOB_ID
# This node's name in file names (a multi-node job writes one report per node).
NODE_NAME=$(tr -cd 'A-Za-z0-9._-' <<<"${SLURMD_NODENAME:-$(hostname -s)}")
JOB_STATE="$STATE_BASE/job-$JOB_ID"

# gpuclk_cmd ARGS...: the configured gpuclk with the site's global options.
gpuclk_cmd() {
  # shellcheck disable=SC2086  # GPUCLK_OPTS is a list of options
  "$GPUCLK" $GPUCLK_OPTS "$@"
}
