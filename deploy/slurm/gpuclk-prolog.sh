#!/usr/bin/env bash
# Slurm Prolog (slurmd runs it as root on each of the job's nodes; slurm.conf: Prolog=):
# applies the job's GPU profile to the job's GPUs only, journaled under the job
# (STATE_BASE/job-JOBID) so gpuclk-epilog.sh restores exactly what this changed, and starts the
# job's measurement (gpuclk stat) in the background. Settings: /etc/gpuclk/slurm.conf.
#
# The profile: `sbatch --comment gpuclk:NAME` asks for PROFILE_DIR/NAME.toml; otherwise
# DEFAULT_PROFILE. A profile that cannot be applied fails the prolog (Slurm drains the node and
# requeues the job); a problem with the measurement never fails the job. docs/slurm.md.
set -u
umask 077
# shellcheck source=deploy/slurm/gpuclk-slurm-common.sh
. "$(dirname "$(readlink -f "$0")")/gpuclk-slurm-common.sh"

# The job's GPUs: Slurm's numbers of the allocated GPUs ("0,2"), as gpuclk's -i takes them.
gpus=${SLURM_JOB_GPUS:-${CUDA_VISIBLE_DEVICES:-}}
if [ -z "$gpus" ]; then
  exit 0 # a job without GPUs: nothing to set or measure
fi
case "$gpus" in
  *[!0-9,]* | ,* | *, | *,,*)
    log err "cannot read the job's GPUs from '$gpus' (SLURM_JOB_GPUS/CUDA_VISIBLE_DEVICES); not changing any GPU"
    exit 1
    ;;
esac

# The profile the job asked for: a word gpuclk:NAME in its comment. SLURM_JOB_COMMENT is in the
# prolog's environment since Slurm 21.08 (unset when the job has no comment); an older slurmd
# lacks it, and COMMENT_FROM_SCONTROL=yes asks slurmctld instead (one RPC per job).
comment=${SLURM_JOB_COMMENT:-}
if [ -z "$comment" ] && [ "$COMMENT_FROM_SCONTROL" == yes ]; then
  comment=$("$SCONTROL" show job -o "$JOB_ID" 2>/dev/null | sed -n 's/.* Comment=\(.*\) StdIn=.*/\1/p')
fi
requested=""
read -r -a words <<<"$(tr ',;' '  ' <<<"$comment")" # read -a: no glob expansion of the words
for word in "${words[@]}"; do
  case "$word" in gpuclk:*) requested=$(tr -cd '[:graph:]' <<<"${word#gpuclk:}" | head -c 100) ;; esac
done

if ! mkdir -p "$STATE_BASE" "$JOB_STATE"; then
  log err "cannot create $JOB_STATE; not changing any GPU"
  exit 1
fi
: >"$JOB_STATE/notes"
profile_name=$DEFAULT_PROFILE
profile_source="site default"
if [ -n "$requested" ]; then
  # Only a plain name of a file in the site's directory: never a path the user chose.
  if [[ ! "$requested" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]*$ ]] || [[ "$requested" == *..* ]]; then
    echo "the requested profile '$requested' is not a profile name; the site default applies" >>"$JOB_STATE/notes"
  elif [ ! -f "$PROFILE_DIR/$requested.toml" ]; then
    echo "the requested profile '$requested' is not one of the site's ($PROFILE_DIR); the site default applies" >>"$JOB_STATE/notes"
  else
    profile_name=$requested
    profile_source="job request"
  fi
fi
printf '%s\n' "$gpus" >"$JOB_STATE/gpus"
printf '%s\n' "$profile_name" >"$JOB_STATE/profile"
# NCCL telemetry (docs/nccl.md): the job's Inspector directory, its user's, which gpuclk serve
# reads as root; the TaskProlog points the job's tasks at it. Never fails the job.
if [ -n "$NCCL_INSPECTOR_ROOT" ] && [ -d "$NCCL_INSPECTOR_ROOT" ]; then
  nccl_dir="$NCCL_INSPECTOR_ROOT/$JOB_ID"
  if ! { mkdir -p "$nccl_dir" && chmod 0700 "$nccl_dir" &&
    chown "${SLURM_JOB_UID:-0}:${SLURM_JOB_GID:-${SLURM_JOB_UID:-0}}" "$nccl_dir"; }; then
    log notice "cannot make $nccl_dir for the job's NCCL Inspector files"
  fi
fi
printf '%s\n' "$profile_source" >"$JOB_STATE/profile_source"
[ -s "$JOB_STATE/notes" ] && log notice "$(tr '\n' ' ' <"$JOB_STATE/notes")"

# Apply, journaled under the job: the epilog restores from this journal and no other.
if [ -n "$profile_name" ]; then
  if ! out=$(gpuclk_cmd --state-dir "$JOB_STATE" -i "$gpus" apply "$PROFILE_DIR/$profile_name.toml" 2>&1); then
    log err "applying profile $profile_name ($profile_source) to GPUs $gpus failed; the node needs attention: $(tr '\n' ' ' <<<"$out")"
    # apply rolled back what it wrote; restore anything it could not (a no-op otherwise).
    gpuclk_cmd --state-dir "$JOB_STATE" restore >/dev/null 2>&1 && rm -rf "$JOB_STATE"
    exit 1
  fi
  log info "profile $profile_name ($profile_source) applied to GPUs $gpus"
fi

# The measurement: gpuclk stat around a placeholder command, in its own session so slurmd does
# not wait for it; the epilog sends SIGTERM and stat writes its report. Never fails the job.
# The placeholder waits for stat itself (the subshell's pid, which exec hands on to stat), so
# it ends too if stat dies some other way.
rm -f "$JOB_STATE/stat.json" # a report left by an earlier run of this job id is not this one's
(
  # shellcheck disable=SC2086  # GPUCLK_OPTS is a list of options
  cd / && exec setsid "$GPUCLK" $GPUCLK_OPTS -i "$gpus" stat --interval "$STAT_INTERVAL" \
    --json "$JOB_STATE/stat.json" -- tail -f --pid="$BASHPID" /dev/null \
    </dev/null >/dev/null 2>"$JOB_STATE/stat.txt"
) &
echo $! >"$JOB_STATE/stat.pid"
# stat creates its JSON file once it holds the signals the epilog sends: from then on a SIGTERM
# (a job cancelled at once) still ends in a report. Waits for that, or for stat to fail.
for _ in $(seq $((STOP_TIMEOUT * 10))); do
  [ -e "$JOB_STATE/stat.json" ] && break
  kill -0 "$(cat "$JOB_STATE/stat.pid")" 2>/dev/null || break
  sleep 0.1
done
if ! kill -0 "$(cat "$JOB_STATE/stat.pid")" 2>/dev/null; then
  log warning "the measurement did not start (no report for this job): $(head -c 500 "$JOB_STATE/stat.txt" | tr '\n' ' ')"
fi
exit 0
