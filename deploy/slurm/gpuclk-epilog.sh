#!/usr/bin/env bash
# Slurm Epilog (slurmd runs it as root on each of the job's nodes when the job ends, also when it
# was cancelled or killed; slurm.conf: Epilog=): stops the job's measurement, restores exactly
# what gpuclk-prolog.sh changed (the journal in STATE_BASE/job-JOBID, on disk, so a slurmd
# restart in between does not matter), and writes the job's GPU report: JSON to
# REPORT_DIR/JOBID.json, text next to the job's output file. The job's state directory is
# removed only when the restore succeeded; a failed restore fails the epilog, so Slurm drains
# the node. Settings: /etc/gpuclk/slurm.conf. docs/slurm.md.
set -u
umask 077
# shellcheck source=deploy/slurm/gpuclk-slurm-common.sh
. "$(dirname "$(readlink -f "$0")")/gpuclk-slurm-common.sh"

[ -d "$JOB_STATE" ] || exit 0 # the prolog changed nothing for this job (no GPUs)
gpus=$(cat "$JOB_STATE/gpus" 2>/dev/null)
profile_name=$(cat "$JOB_STATE/profile" 2>/dev/null)
profile_source=$(cat "$JOB_STATE/profile_source" 2>/dev/null)

# 1. Stop the measurement: SIGTERM makes stat end its placeholder and write the report. The pid
#    is only signalled while it is still this job's stat (the pid may have been reused).
pid=$(cat "$JOB_STATE/stat.pid" 2>/dev/null)
ours() { [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$JOB_STATE/stat.json"; }
if ours; then
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq $((STOP_TIMEOUT * 10))); do
    ours || break
    sleep 0.1
  done
  if ours; then
    log warning "the measurement did not stop within ${STOP_TIMEOUT}s; killing it (no report)"
    kill -KILL "$pid" 2>/dev/null
  fi
fi

# 2. Restore what this job's prolog changed, and nothing else.
restored=true
if ! out=$(gpuclk_cmd --state-dir "$JOB_STATE" restore 2>&1); then
  restored=false
  log err "restoring GPUs $gpus failed; their settings are not the node's defaults (journal kept in $JOB_STATE): $(tr '\n' ' ' <<<"$out")"
fi

# 3. The report. stat's JSON is complete once it ends with its closing brace.
stat_json=null
if [ -s "$JOB_STATE/stat.json" ] && [ "$(tail -c 2 "$JOB_STATE/stat.json" | tr -d '\n')" == "}" ]; then
  stat_json=$(cat "$JOB_STATE/stat.json")
else
  echo "no measurement: the job's gpuclk stat did not write its report" >>"$JOB_STATE/notes"
  log warning "no report for this job: gpuclk stat did not write one"
fi
# 3b. What gpuclk serve booked to this job (docs/attribution.md): its share of each GPU's energy
#     counter while its processes were on the GPUs, GPU-hours, clocks and throttle time. Asked
#     once its processes are gone from the service's books (their last interval booked; at most
#     ATTRIBUTION_WAIT s). No service, or one that saw no process of the job: null. It goes into
#     the JSON report and, as one line, the text report. (Not into the job's AdminComment: slurmd
#     runs the epilog once the job has finished, and slurmctld refuses to update a finished job,
#     "Job has already finished".)
attributed=null
attributed_line=""
if [ "$ATTRIBUTION_WAIT" -gt 0 ]; then
  text=""
  for _ in $(seq $((ATTRIBUTION_WAIT * 5))); do
    # No service, or one that saw no process of the job: nothing to wait for.
    text=$(gpuclk_cmd stat --job "$JOB_ID" 2>/dev/null) || { text=""; break; }
    grep -q '^[^:]*: running,' <<<"$text" || break
    sleep 0.2
  done
  if [ -n "$text" ]; then
    attributed=$(gpuclk_cmd stat --job "$JOB_ID" --format json 2>/dev/null) || attributed=null
    attributed_line=$(sed -n 's/^Summary: //p' <<<"$text")
  fi
fi

json_string() { # a JSON string: the few characters that need escaping in our own notes
  local s=${1//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}
notes_json=$(while IFS= read -r line; do
  json_string "$line"
  echo
done <"$JOB_STATE/notes" | paste -sd ',')
exit_code=${SLURM_JOB_EXIT_CODE2:-}
if [ -n "$REPORT_DIR" ]; then
  if mkdir -p "$REPORT_DIR"; then
    tmp="$REPORT_DIR/.$JOB_ID.json.$$"
    {
      echo "{"
      echo "  \"format\": \"gpuclk-slurm-job\","
      echo "  \"version\": 1,"
      echo "  \"job_id\": $JOB_ID,"
      echo "  \"user\": $(json_string "${SLURM_JOB_USER:-}"),"
      echo "  \"uid\": ${SLURM_JOB_UID:-null},"
      echo "  \"node\": $(json_string "$NODE_NAME"),"
      echo "  \"job_exit_code\": $(json_string "$exit_code"),"
      echo "  \"gpus\": [${gpus}],"
      echo "  \"profile\": $(json_string "$profile_name"),"
      echo "  \"profile_source\": $(json_string "$profile_source"),"
      echo "  \"restored\": $restored,"
      echo "  \"notes\": [${notes_json}],"
      echo "  \"attributed\": $attributed,"
      echo "  \"stat\": $stat_json"
      echo "}"
    } >"$tmp" && chmod 0644 "$tmp" && mv -f "$tmp" "$REPORT_DIR/$JOB_ID.json"
    [ -f "$tmp" ] && rm -f "$tmp" && log warning "cannot write $REPORT_DIR/$JOB_ID.json"
  else
    log warning "cannot create $REPORT_DIR"
  fi
fi

# The text form beside the job's output, written as the job's user (never as root into a
# directory the user controls).
if [ "$REPORT_TO_OUTPUT_DIR" == yes ] && [ "$stat_json" != null ] && [ -n "${SLURM_JOB_UID:-}" ]; then
  stdout=$("$SCONTROL" show job "$JOB_ID" 2>/dev/null | sed -n 's/^ *StdOut=//p' | head -1)
  dir=$(dirname "$stdout" 2>/dev/null)
  # shellcheck disable=SC2016  # $1 is the inner shell's: the path, never part of the script
  write_file='cat >"$1"'
  if [ -n "$stdout" ] && [ "$stdout" != /dev/null ] && [[ "$dir" == /* ]] && [[ "$dir" != *%* ]]; then
    {
      echo "gpuclk report for Slurm job $JOB_ID on $NODE_NAME: GPUs $gpus," \
        "profile ${profile_name:-none} ($profile_source), settings restored: $restored"
      echo "(measured from the prolog to the epilog; \"tail -f --pid\" is the placeholder that held it open)"
      sed 's/^/note: /' "$JOB_STATE/notes"
      [ -n "$attributed_line" ] && echo "its processes, as gpuclk serve booked them: $attributed_line"
      echo
      grep -v "^note: no process of the command appeared" "$JOB_STATE/stat.txt"
    } | setpriv --reuid "$SLURM_JOB_UID" --regid "${SLURM_JOB_GID:-$SLURM_JOB_UID}" --clear-groups \
      -- sh -c "$write_file" sh "$dir/gpuclk-$JOB_ID.$NODE_NAME.txt" 2>/dev/null ||
      log notice "cannot write the text report to $dir (as uid $SLURM_JOB_UID)"
  fi
fi

# The job's NCCL Inspector files: read by gpuclk serve meanwhile (it polls every second; the
# attribution wait above outlasts that), then removed.
if [ -n "$NCCL_INSPECTOR_ROOT" ] && [ -d "$NCCL_INSPECTOR_ROOT/$JOB_ID" ]; then
  rm -rf "${NCCL_INSPECTOR_ROOT:?}/$JOB_ID"
fi

# 4. The journal goes only once the GPUs are back.
if [ "$restored" == true ]; then
  rm -rf "$JOB_STATE"
  exit 0
fi
exit 1
