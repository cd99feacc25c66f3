#!/bin/sh
# Soak: one vmafhip element scores FRAMES frames of a small moving test
# pattern against a blurred copy, with a frame message per frame and a CSV
# results file, and prints the process's resident memory (and, with
# BACKEND=hip, the GPU memory in use) every INTERVAL seconds.
#
#   sh benches/soak.sh FRAMES [BACKEND] [INTERVAL]      (from the repository root)
#
# GL names gst-launch-1.0 (default: the one on PATH); GST_PLUGIN_PATH must
# find the plugin. Prints "rss_kb" samples, then the results file's frame
# count and whether it closed with its pooled part.
set -eu
FRAMES=${1:-1000000}
BACKEND=${2:-cpu}
INTERVAL=${3:-5}
GL=${GL:-gst-launch-1.0}
OUTCSV=${OUTCSV:-/tmp/vmafhip-soak.csv}
rm -f "$OUTCSV"
$GL videotestsrc num-buffers="$FRAMES" pattern=ball ! video/x-raw,format=I420,width=64,height=48,framerate=30/1 \
  ! tee name=t t. ! queue ! v.ref_sink \
  t. ! queue ! videoscale ! video/x-raw,width=32,height=24 ! videoscale ! video/x-raw,width=64,height=48 ! v.dist_sink \
  vmafhip name=v backend="$BACKEND" frame-message=true results-filename="$OUTCSV" results-format=csv \
  ! fakesink sync=false > /tmp/vmafhip-soak.log 2>&1 &
PID=$!
START=$(date +%s)
echo "t_s rss_kb gpu_mib"
while kill -0 "$PID" 2>/dev/null; do
  RSS=$(awk '/VmRSS/ {print $2}' /proc/"$PID"/status 2>/dev/null || echo 0)
  GPU=-
  if [ "$BACKEND" = hip ] && command -v nvidia-smi >/dev/null; then
    GPU=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null \
      | awk -F', ' -v p="$PID" '$1 == p {print $2}')
    GPU=${GPU:--}
  fi
  [ -n "$RSS" ] && echo "$(( $(date +%s) - START )) $RSS $GPU"
  sleep "$INTERVAL"
done
wait "$PID" || { echo "gst-launch failed:"; tail -5 /tmp/vmafhip-soak.log; exit 1; }
END=$(date +%s)
ROWS=$(($(wc -l < "$OUTCSV") - 1))
echo "frames in results file: $ROWS of $FRAMES; elapsed $((END - START)) s"
tail -3 /tmp/vmafhip-soak.log
