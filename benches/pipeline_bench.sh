#!/bin/sh
# GStreamer pipeline benchmark on the GPU machine (no GStreamer installed
# there): unpacks Debian's GStreamer 1.22 from .device/debs into /tmp, writes
# two raw 1080p I420 clips, and times
#   filesrc ! rawvideoparse (x2) -> vmafhip backend=hip -> fakesink
# over RUNS runs (median reported by the caller). Usage, from the repository
# root: sh benches/pipeline_bench.sh FRAMES RUNS. Then the same with two
# videotestsrc sources that write into vmafhip's pinned pool (PINNED_FRAMES
# frames, default FRAMES). MODEL picks the model (default vmaf_v0.6.1);
# PINNED_ONLY=1 runs only the pinned-pool pipelines.
set -eu
FRAMES=${1:-600}
RUNS=${2:-5}
MODEL=${MODEL:-vmaf_v0.6.1}
. benches/device_gst_env.sh
# fps LABEL RUN FRAMES: frames per second from the run's "Execution ended after".
fps() {
  t=$(grep -o "Execution ended after [0-9:.]*" /tmp/run.log | awk '{print $4}')
  awk -v t="$t" -v n="$3" -v r="$2" -v l="$1" 'BEGIN { split(t, a, ":"); s = a[1] * 3600 + a[2] * 60 + a[3]; printf "%s run %d: %.1f fps (%d frames in %.3f s)\n", l, r, n / s, n, s }'
}
if [ "${PINNED_ONLY:-0}" != 1 ]; then
python3 - "$FRAMES" <<'PY'
import sys, numpy as np
n = int(sys.argv[1]); w, h = 1920, 1080
rng = np.random.default_rng(1)
y, x = np.mgrid[0:h, 0:w].astype(np.float32)
with open("/tmp/ref.yuv", "wb") as fr, open("/tmp/dis.yuv", "wb") as fd:
    frames = []
    for k in range(32):
        luma = 128 + 70 * np.sin((x + 3 * k) * 0.013 + y * 0.021) + 25 * np.cos(x * 0.21) * np.sin(y * 0.17)
        luma = np.clip(luma + rng.integers(0, 8, (h, w)), 0, 255)
        dis = np.clip(np.round(luma / 12) * 12, 0, 255)
        chroma = np.full((h // 2) * (w // 2) * 2, 128, np.uint8).tobytes()
        frames.append((luma.astype(np.uint8).tobytes() + chroma, dis.astype(np.uint8).tobytes() + chroma))
    for i in range(n):
        fr.write(frames[i % 32][0]); fd.write(frames[i % 32][1])
PY
PARSE="rawvideoparse width=1920 height=1080 format=i420 framerate=60/1"
SRC="filesrc blocksize=3110400"
/tmp/gstroot/usr/bin/gst-inspect-1.0 vmafhip | grep -E "Long-name|Version" || true
# gst-launch reports the time from PLAYING to EOS ("Execution ended after
# H:MM:SS.nnnnnnnnn"): the pipeline's own wall clock, without process start-up.
for r in $(seq 1 "$RUNS"); do
  $GL -m $SRC location=/tmp/ref.yuv ! $PARSE ! v.ref_sink \
      $SRC location=/tmp/dis.yuv ! $PARSE ! v.dist_sink \
      vmafhip name=v backend=hip model-filename=$MODEL ! fakesink > /tmp/run.log 2>&1 || { cat /tmp/run.log; exit 1; }
  grep -o "type=(string)pooled, score=(double)[0-9.]*" /tmp/run.log | head -1
  grep -o 'backend=(string)"[^"]*"' /tmp/run.log | head -1
  fps "pipeline" "$r" "$FRAMES"
done
# The same two sources without vmafhip: what filesrc ! rawvideoparse alone delivers.
for r in $(seq 1 "$RUNS"); do
  $GL -m $SRC location=/tmp/ref.yuv ! $PARSE ! fakesink \
      $SRC location=/tmp/dis.yuv ! $PARSE ! fakesink > /tmp/run.log 2>&1 || { cat /tmp/run.log; exit 1; }
  fps "sources only" "$r" "$FRAMES"
done
fi
# Sources that allocate from downstream's pool: videotestsrc writes each frame
# into vmafhip's pinned host buffers (ALLOCATION query), which the GPU reads in
# place. Then the same two sources into fakesink: their own ceiling. Solid
# frames (videotestsrc's pattern=ball renders at ~110 fps at 1080p, far below
# the engine); the kernels' work does not depend on the picture.
CAPS="video/x-raw,format=I420,width=1920,height=1080,framerate=60/1"
PF=${PINNED_FRAMES:-$FRAMES}
TS="videotestsrc num-buffers=$PF pattern=solid-color"
for r in $(seq 1 "$RUNS"); do
  $GL -m $TS foreground-color=0xff808080 ! $CAPS ! v.ref_sink \
      $TS foreground-color=0xffa0a0a0 ! $CAPS ! v.dist_sink \
      vmafhip name=v backend=hip model-filename=$MODEL ! fakesink > /tmp/run.log 2>&1 || { cat /tmp/run.log; exit 1; }
  grep -o "type=(string)pooled, score=(double)[0-9.]*" /tmp/run.log | head -1
  fps "pinned pipeline" "$r" "$PF"
done
for r in $(seq 1 "$RUNS"); do
  $GL -m $TS foreground-color=0xff808080 ! $CAPS ! fakesink \
      $TS foreground-color=0xffa0a0a0 ! $CAPS ! fakesink > /tmp/run.log 2>&1 || { cat /tmp/run.log; exit 1; }
  fps "videotestsrc only" "$r" "$PF"
done
