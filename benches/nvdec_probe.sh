#!/bin/bash
# Where GStreamer 1.22's NVDEC decode rate goes, beside ffmpeg's, on the GPU
# machine (docs/PERFORMANCE.md, "End to end"): the H.264 pair of
# benches/e2e_bench.sh decoded by each in several set-ups, each the median
# of RUNS process wall clocks. Same set-up as e2e_bench.sh (DEV, /tmp/t).
#   RUNS=3 bash benches/nvdec_probe.sh
set -u
RUNS=${RUNS:-3}
FC=${FC:-600}
S=${S:-1080}
. benches/device_gst_env.sh
FF=/tmp/t/ff/bin/ffmpeg
C=/tmp/e2e
mkdir -p "$C"
export PATH=/tmp/gstroot/usr/bin:$PATH

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# row LABEL FRAMES CMD...: RUNS timings of CMD, fps = FRAMES / seconds.
row() {
  local label=$1 frames=$2 fps=() s e
  shift 2
  for _ in $(seq "$RUNS"); do
    s=$(now)
    timeout 120 "$@" > "$C/probe.log" 2>&1 || { echo "$label: FAILED"; tail -3 "$C/probe.log"; return; }
    e=$(now)
    fps+=("$(awk -v s="$s" -v e="$e" -v f="$frames" 'BEGIN {printf "%.1f", f / (e - s)}')")
  done
  echo "| $label | $(printf '%s\n' "${fps[@]}" | median) | ${fps[*]} |"
}

if [ $S = 1080 ]; then W=1920 H=1080 N=$FC HI=5000 LO=1500; else W=3840 H=2160 N=300 HI=12000 LO=4000; fi
for q in "ref $HI" "dis $LO"; do
  set -- $q
  [ -f "$C/${S}_$1.mp4" ] || $GL -q videotestsrc num-buffers="$N" pattern=smpte horizontal-speed=3 \
    ! video/x-raw,width="$W",height="$H",format=I420,framerate=30/1 \
    ! x264enc bitrate="$2" speed-preset=veryfast key-int-max=60 ! video/x-h264,profile=high \
    ! h264parse ! mp4mux ! filesink location="$C/${S}_$1.mp4" > /dev/null
done
R=$C/${S}_ref.mp4 D=$C/${S}_dis.mp4
$GI nvh264dec 2>/dev/null | grep -A2 "max-display-delay" | head -3
$GI 2>/dev/null | grep -i "nvh26\|nvcuda\|cuda" | head
echo "| set-up (${S}p H.264, $N frames per file) | fps (frames per file / s) | runs |"
echo "|---|---|---|"
if [ -x "$FF" ]; then
  HW="-hwaccel cuda -hwaccel_output_format cuda"
  row "ffmpeg NVDEC, both files, one process" "$N" "$FF" -hide_banner -loglevel error $HW -i "$D" $HW -i "$R" -map 0:v -map 1:v -f null -
  row "ffmpeg NVDEC, ref only" "$N" "$FF" -hide_banner -loglevel error $HW -i "$R" -f null -
  row "ffmpeg NVDEC, dis only" "$N" "$FF" -hide_banner -loglevel error $HW -i "$D" -f null -
  row "ffmpeg NVDEC, ref only, frames to host" "$N" "$FF" -hide_banner -loglevel error -hwaccel cuda -i "$R" -f null -
fi
dec() { echo filesrc location="$1" ! qtdemux ! h264parse ! "${@:2}"; }
CM='video/x-raw(memory:CUDAMemory)'
row "nvh264dec, both files, one pipeline, into fakesink (host memory)" "$N" \
  $GL -q $(dec "$R" nvh264dec ! fakesink) $(dec "$D" nvh264dec ! fakesink)
row "nvh264dec, both files, one pipeline, CUDA memory caps" "$N" \
  $GL -q $(dec "$R" nvh264dec ! "$CM" ! fakesink) $(dec "$D" nvh264dec ! "$CM" ! fakesink)
row "nvh264dec, ref only, CUDA memory" "$N" $GL -q $(dec "$R" nvh264dec ! "$CM" ! fakesink)
row "nvh264dec, dis only, CUDA memory" "$N" $GL -q $(dec "$D" nvh264dec ! "$CM" ! fakesink)
row "nvh264dec, two processes at once, CUDA memory" "$N" bash -c \
  "$GL -q $(dec "$R" nvh264dec ! "'$CM'" ! fakesink) & $GL -q $(dec "$D" nvh264dec ! "'$CM'" ! fakesink); wait"
for d in 0 1 8 16; do
  row "nvh264dec max-display-delay=$d, ref only, CUDA memory" "$N" \
    $GL -q $(dec "$R" nvh264dec max-display-delay=$d ! "$CM" ! fakesink)
done
row "h264parse only (demux and parse, no decode), ref" "$N" $GL -q $(dec "$R" fakesink)
if $GI nvh264sldec > /dev/null 2>&1; then
  row "nvh264sldec, ref only, CUDA memory" "$N" $GL -q $(dec "$R" nvh264sldec ! "$CM" ! fakesink)
  row "nvh264sldec, both files, one pipeline, CUDA memory" "$N" \
    $GL -q $(dec "$R" nvh264sldec ! "$CM" ! fakesink) $(dec "$D" nvh264sldec ! "$CM" ! fakesink)
fi
