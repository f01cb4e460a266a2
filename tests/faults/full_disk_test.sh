#!/usr/bin/env bash
# A full disk under the journal (a 64 KiB tmpfs as the state directory, filled with a file):
#   - `restore` puts every GPU back all the same, prints the table of what each reads now, and
#     says (exit 255) that the journal on disk still lists them, and what to do; the next restore
#     once there is room clears it;
#   - `set` whose journal cannot be saved after its writes (the disk fills between the writes
#     and the final save) keeps the settings it read back, prints its table, and says the saved
#     journal still lets `gpuclk restore` undo them; restore then does.
# Needs root (mount); skips (77) otherwise.
source "$(dirname "$0")/lib.sh" "$1"
DISK="$TEST_TMP/disk"
mkdir "$DISK"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=64k tmpfs "$DISK" 2>/dev/null; then
  echo "skipped: needs root to mount a small tmpfs"
  exit 77
fi
trap 'umount "$DISK" 2>/dev/null; stop_serve; rm -rf "$TEST_TMP"' EXIT
export GPUCLK_STATE_DIR="$DISK/state"
limits() { "$GPUCLK_BIN" --sim --direct query --query-gpu=power.limit --format=csv,noheader,nounits | tr '\n' ' ' | sed 's/ $//'; }
fill() { dd if=/dev/zero of="$DISK/fill" bs=4k count=64 2>/dev/null; }
INITIAL="700.00 700.00 700.00 700.00"

# --- restore on a full disk ---
gpuclk --sim set -i 0,1 --power-limit 600
expect_exit 0
fill
gpuclk --sim restore
LAST_CMD="gpuclk restore on a full disk"
expect_exit 255
expect_out_re "0 +power limit +600 W +700 W +700 W +changed"
expect_out_re "1 +power limit +600 W +700 W +700 W +changed"
expect_err "the journal could not be saved"
expect_err "No space left on device"
expect_err "it still lists GPU 0, 1 as set by gpuclk"
expect_err "free space in the state directory, then run \`gpuclk restore\` again"
check; [ "$(limits)" == "$INITIAL" ] || fail "not restored: $(limits)"
rm "$DISK/fill"
gpuclk --sim restore
expect_exit 0
gpuclk --sim --format json journal
expect_json '.gpus | length' 0
check; [ -z "$(find "$GPUCLK_STATE_DIR" -name '*.tmp')" ] || fail "temporary files left: $(ls -a "$GPUCLK_STATE_DIR")"

# --- set: the disk fills between its writes and its final save ---
rm -f "$TEST_TMP/paused"
GPUCLK_TEST_PAUSE_AFTER_WRITES=2 GPUCLK_TEST_PAUSE_MARKER="$TEST_TMP/paused" \
  "$GPUCLK_BIN" --sim set -i 0,1 --power-limit 600 >"$TEST_TMP/set.out" 2>"$TEST_TMP/set.err" &
pid=$!
check; wait_for 10 '[ -s "$TEST_TMP/paused" ]' || fail "set never paused after its writes"
fill
rm "$TEST_TMP/paused"
wait "$pid"; RC=$?
OUT=$(cat "$TEST_TMP/set.out"); ERR=$(cat "$TEST_TMP/set.err")
LAST_CMD="gpuclk set whose final journal save meets a full disk"
expect_exit 0
expect_out_re "0 +power limit +700 W +600 W +600 W +changed"
expect_out_re "1 +power limit +700 W +600 W +600 W +changed"
expect_out "note: the journal could not be updated after the writes"
expect_out "so \`gpuclk restore\` still undoes them"
check; [ "$(limits)" == "600.00 600.00 700.00 700.00" ] || fail "$(limits)"
rm "$DISK/fill"
gpuclk --sim restore
expect_exit 0
check; [ "$(limits)" == "$INITIAL" ] || fail "restore after the failed save: $(limits)"
gpuclk --sim --format json journal
expect_json '.gpus | length' 0
finish
