#!/bin/sh
# Encoding-ladder benchmark on the GPU machine: one 1080p reference and a
# five-rendition ladder (1080p, 720p, 540p, 360p, 240p) as raw I420 files
# in page cache, scored three ways:
#   ladder    one vmafhip element: dist_sink and four dist_sink_%u, each
#             rendition scaled to 1080p by the engine (on the GPU), the
#             reference uploaded and its own work done once per frame;
#             then the same with VMAFHIP_SHARE_REFERENCE=0 (each
#             rendition's engine does the reference's work itself);
#   separate  five vmafhip elements in one pipeline, each smaller rendition
#             upscaled by videoscale (method=catrom) in front of its
#             element: a ladder scored without request pads;
#   lone      five vmafhip commands one after the other, on the renditions
#             upscaled to 1080p beforehand (one pair per process);
#   engine    the engine alone (examples/bench, frames preloaded in pinned
#             memory, no start-up) on those five pairs one after the other:
#             the bound without decoding, scaling or GStreamer.
# Prints, per run, reference frames per second with all five renditions
# scored. Usage, from the repository root: sh benches/ladder_bench.sh FRAMES
# RUNS. Needs .device/ (benches/device_debs.sh, the plugin, the command and
# bin/bench, examples/bench built with --no-default-features).
set -eu
FRAMES=${1:-300}
RUNS=${2:-3}
. benches/device_gst_env.sh
CMD=$PWD/.device/bin/vmafhip
BENCH=$PWD/.device/bin/bench
D=/tmp/ladder
mkdir -p $D
python3 - "$FRAMES" "$D" <<'PY'
import sys, numpy as np
n, d = int(sys.argv[1]), sys.argv[2]
w, h = 1920, 1080
rng = np.random.default_rng(1)
y, x = np.mgrid[0:h, 0:w].astype(np.float32)
chroma = np.full((h // 2) * (w // 2) * 2, 128, np.uint8).tobytes()
frames = []
for k in range(32):
    luma = 128 + 70 * np.sin((x + 3 * k) * 0.013 + y * 0.021) + 25 * np.cos(x * 0.21) * np.sin(y * 0.17)
    luma = np.clip(luma + rng.integers(0, 8, (h, w)), 0, 255)
    dis = np.clip(np.round(luma / 12) * 12, 0, 255)
    frames.append((luma.astype(np.uint8).tobytes() + chroma, dis.astype(np.uint8).tobytes() + chroma))
with open(f"{d}/ref.yuv", "wb") as fr, open(f"{d}/r1080.yuv", "wb") as fd:
    for i in range(n):
        fr.write(frames[i % 32][0])
        fd.write(frames[i % 32][1])
PY
PARSE() { echo "rawvideoparse width=$1 height=$2 format=i420 framerate=30/1"; }
SIZES="1280x720 960x540 640x360 426x240"
for s in $SIZES; do
  w=${s%x*} h=${s#*x}
  $GL -q filesrc location=$D/ref.yuv ! $(PARSE 1920 1080) ! videoscale ! video/x-raw,width=$w,height=$h \
    ! filesink location=$D/r$h.yuv > /dev/null
  $GL -q filesrc location=$D/r$h.yuv ! $(PARSE "$w" "$h") ! videoscale method=catrom ! video/x-raw,width=1920,height=1080 \
    ! filesink location=$D/up$h.yuv > /dev/null
done
cat $D/*.yuv > /dev/null
SRC() { echo "filesrc location=$D/$1.yuv ! $(PARSE "$2" "$3")"; }
LADDER="$(SRC ref 1920 1080) ! v.ref_sink $(SRC r1080 1920 1080) ! v.dist_sink"
SEPARATE="$(SRC ref 1920 1080) ! e0.ref_sink $(SRC r1080 1920 1080) ! e0.dist_sink vmafhip name=e0 backend=hip ! fakesink sync=false"
k=0
for s in $SIZES; do
  w=${s%x*} h=${s#*x}
  LADDER="$LADDER $(SRC r$h "$w" "$h") ! v.dist_sink_$k"
  k=$((k + 1))
  SEPARATE="$SEPARATE $(SRC ref 1920 1080) ! e$k.ref_sink $(SRC r$h "$w" "$h") ! videoscale method=catrom \
    ! video/x-raw,width=1920,height=1080 ! e$k.dist_sink vmafhip name=e$k backend=hip ! fakesink sync=false"
done
LADDER="$LADDER vmafhip name=v backend=hip ! fakesink sync=false"
# elapsed: seconds from gst-launch's "Execution ended after H:MM:SS.N".
elapsed() {
  grep -o "Execution ended after [0-9:.]*" "$1" | awk '{split($4, a, ":"); print a[1] * 3600 + a[2] * 60 + a[3]}'
}
report() {
  awk -v l="$1" -v r="$2" -v n="$FRAMES" -v s="$3" 'BEGIN { printf "%s run %d: %.1f fps (%d reference frames, 5 renditions, %.3f s)\n", l, r, n / s, n, s }'
}
for run in $(seq 1 "$RUNS"); do
  # shellcheck disable=SC2086 # the pipelines are word lists
  $GL $LADDER > /tmp/ladder.log 2>&1 || { tail -3 /tmp/ladder.log; exit 1; }
  report ladder "$run" "$(elapsed /tmp/ladder.log)"
  # shellcheck disable=SC2086
  VMAFHIP_SHARE_REFERENCE=0 $GL $LADDER > /tmp/ladder-own.log 2>&1 || { tail -3 /tmp/ladder-own.log; exit 1; }
  report "ladder, reference not shared" "$run" "$(elapsed /tmp/ladder-own.log)"
  # shellcheck disable=SC2086
  $GL $SEPARATE > /tmp/separate.log 2>&1 || { tail -3 /tmp/separate.log; exit 1; }
  report separate "$run" "$(elapsed /tmp/separate.log)"
  t0=$(date +%s.%N)
  $CMD -q -r $D/ref.yuv -d $D/r1080.yuv -w 1920 -h 1080 --backend hip
  for s in $SIZES; do
    $CMD -q -r $D/ref.yuv -d $D/up${s#*x}.yuv -w 1920 -h 1080 --backend hip
  done
  t1=$(date +%s.%N)
  report lone "$run" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
  secs=0
  for f in r1080 up720 up540 up360 up240; do
    fps=$($BENCH --backend hip --width 1920 --height 1080 --frames "$FRAMES" --runs 1 --no-profile \
      --yuv $D/ref.yuv,$D/$f.yuv | grep -o "engine fps (median of 1)[^|]*| [0-9.]*" | awk '{print $NF}')
    secs=$(awk -v s="$secs" -v n="$FRAMES" -v f="$fps" 'BEGIN { print s + n / f }')
  done
  report engine "$run" "$secs"
done
# What the ladder element scored: how often the reference's work was
# shared, each rendition's pooled frame count and VMAF (every one must
# have all FRAMES), and any warning.
# shellcheck disable=SC2086
GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1 $GL -m $LADDER > /tmp/ladder-m.log 2>&1
grep -o "shared reference: .*" /tmp/ladder-m.log | tail -1
grep "type=(string)pooled" /tmp/ladder-m.log \
  | sed 's/.*score=(double)\([0-9.]*\).*frames=(guint64)\([0-9]*\).*rendition=(string)\([a-z_0-9]*\).*/\3: \2 frames, pooled VMAF \1/'
echo "warnings: $(grep -c WARNING /tmp/ladder-m.log || true)"
