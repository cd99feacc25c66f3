#!/bin/sh
# Soak: one vmafhip element scores FRAMES frames of a small moving test
# pattern against a blurred copy, with a frame message per frame and a CSV
# results file, and prints the process's resident memory (and, with
# BACKEND=hip, the GPU memory in use) every INTERVAL seconds.
#
#   sh benches/soak.sh FRAMES [BACKEND] [INTERVAL]      (from the repository root)
#
# GL names gst-launch-1.0 (default: the one on PATH); GST_PLUGIN_PATH must
# find the plugin. SIZE (WxH, default 64x48), RATE (default 30/1), LIVE
# (true: a live source at RATE; default false) and PROPS (more element
# properties) shape the stream; OUTCSV names the results file. Prints
# "rss_kb" samples, then the results file's frame count, an md5 of the
# whole file and of each block of 100,000 frames (so that two runs on
# different machines can be compared, and a difference found), and the
# pooled message's counts.
set -eu
FRAMES=${1:-1000000}
BACKEND=${2:-cpu}
INTERVAL=${3:-5}
GL=${GL:-gst-launch-1.0}
OUTCSV=${OUTCSV:-/tmp/vmafhip-soak.csv}
SIZE=${SIZE:-64x48}
W=${SIZE%x*} H=${SIZE#*x}
RATE=${RATE:-30/1}
LIVE=${LIVE:-false}
PROPS=${PROPS:-}
LOG=${OUTCSV%.csv}.log
rm -f "$OUTCSV"
# shellcheck disable=SC2086 # PROPS holds several properties
$GL -m videotestsrc is-live="$LIVE" num-buffers="$FRAMES" pattern=ball ! video/x-raw,format=I420,width="$W",height="$H",framerate="$RATE" \
  ! tee name=t t. ! queue ! v.ref_sink \
  t. ! queue ! videoscale ! video/x-raw,width=$((W / 2)),height=$((H / 2)) ! videoscale ! video/x-raw,width="$W",height="$H" ! v.dist_sink \
  vmafhip name=v backend="$BACKEND" frame-message=true results-filename="$OUTCSV" results-format=csv $PROPS \
  ! fakesink sync=false 2>&1 | grep -v 'type=(string)frame' > "$LOG" &
sleep 1
PID=$(pgrep -n -f "gst-launch-1.0 -m videotestsrc is-live=$LIVE num-buffers=$FRAMES" || echo 0)
START=$(date +%s)
echo "t_s rss_kb gpu_mib"
while [ "$PID" != 0 ] && kill -0 "$PID" 2>/dev/null; do
  RSS=$(awk '/VmRSS/ {print $2}' /proc/"$PID"/status 2>/dev/null || echo 0)
  GPU=-
  if [ "$BACKEND" != cpu ] && command -v nvidia-smi >/dev/null; then
    GPU=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null \
      | awk -F', ' -v p="$PID" '$1 == p {print $2}')
    GPU=${GPU:--}
  fi
  [ -n "$RSS" ] && echo "$(( $(date +%s) - START )) $RSS $GPU"
  sleep "$INTERVAL"
done
wait || true
END=$(date +%s)
grep -q "type=(string)pooled" "$LOG" || { echo "gst-launch failed:"; tail -5 "$LOG"; exit 1; }
ROWS=$(($(wc -l < "$OUTCSV") - 1))
echo "frames in results file: $ROWS of $FRAMES; elapsed $((END - START)) s"
echo "results md5: $(md5sum < "$OUTCSV" | cut -c1-32)"
awk -F, 'NR > 1 && $1 != NR - 2 {bad++} END {print "frame indices out of sequence: " bad + 0}' "$OUTCSV"
awk -v dir="${OUTCSV%.csv}" 'NR > 1 {print > (dir ".block" sprintf("%03d", int(($1 + 0) / 100000)))}' "$OUTCSV"
for b in "${OUTCSV%.csv}".block*; do
  i=$(echo "${b##*.block}" | sed "s/^0*//")
  i=${i:-0}
  echo "frames $((i * 100000))-$((i * 100000 + 99999)): md5 $(md5sum < "$b" | cut -c1-32), $(wc -l < "$b") rows"
  rm -f "$b"
done
grep -o 'frames=(guint64)[0-9]*, frames-fresh=(guint64)[0-9]*, frames-repeated=(guint64)[0-9]*, frames-unscored=(guint64)[0-9]*' "$LOG"
grep -o 'backend=(string)"[^"]*"' "$LOG" | tail -1 | cut -c1-600
grep -c "GPU error at frame" "$LOG" | sed 's/^/GPU error warnings: /'
grep -c "the GPU is back" "$LOG" | sed 's/^/GPU back notes: /'
