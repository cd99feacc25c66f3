#!/bin/bash
# On the GPU machine: libvmaf's C API served by vmafhip (libvmaf/), driven
# by a real client, ffmpeg 7.1.5's CPU libvmaf filter, built on the
# development machine against libvmaf f85a8536's own headers
# (docs/device-runs/2026-11-27-libvmaf-ffmpeg-cpu.txt says how).
#   1. Golden pairs with VMAFHIP_BACKEND unset (the CPU engine) and =hip
#      (the GPU engine): each JSON against libvmaf's, every printed digit.
#   2. A 1280x720 pan across the golden photograph with grain (200 frames
#      there and back: 400) against a blurred copy: ffmpeg's wall time with the CPU engine
#      (n_threads=16) and with VMAFHIP_BACKEND=hip, RUNS alternating runs,
#      and the two JSONs compared digit for digit.
#   3. The HIP fork's state calls (tests/c/hip_state.c, built here as
#      DEV/lv/hip_state): the GPU listed, a state imported, a golden pair
#      scored on it, against the CPU engine's JSON through ffmpeg.
# Needs DEV/lv: libvmaf.so.zst (stripped target/release/libvmaf.so),
# ffmpeg.zst, hip_state, libs/ (libdrm.so.2, libz.so.1 of the build machine); and
# DEV/debs' zstd and libzstd1 where the machine has no zstd.
set -u
D=${DEV:-.device} W=/tmp/lv RUNS=${RUNS:-3}
mkdir -p $W
Z=
if ! command -v zstd > /dev/null; then
  for d in $D/debs/libzstd1_*.deb $D/debs/zstd_*.deb; do dpkg -x $d $W/z; done
  export PATH=$W/z/usr/bin:$PATH
  Z=:$W/z/usr/lib/x86_64-linux-gnu
fi
export LD_LIBRARY_PATH=$W$Z
zstd -q -d -f $D/lv/libvmaf.so.zst -o $W/libvmaf.so.3
zstd -q -d -f $D/lv/ffmpeg.zst -o $W/ffmpeg && chmod +x $W/ffmpeg
cp -n $D/lv/libs/* $W/ 2>/dev/null
export VMAFHIP_CACHE_DIR=/tmp/vc
FF=$W/ffmpeg G=tests/data/golden
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

same() {  # same OURS.json THEIRS.json: values that differ in a printed digit
  python3 - "$1" "$2" <<'PY'
import json, sys
o, g = (json.load(open(p)) for p in sys.argv[1:3])
n = sum(len(f["metrics"]) for f in g["frames"])
bad = sum(1 for a, b in zip(o["frames"], g["frames"]) for k, v in b["metrics"].items() if a["metrics"].get(k) != v)
bad += sum(1 for k, v in g["pooled_metrics"].items() if o["pooled_metrics"].get(k) != v)
print(f"{len(o['frames'])} frames, {n} per-frame values, {len(g['pooled_metrics'])} pooled metrics: {bad} differ in a printed digit")
PY
}

golden() {  # golden BACKEND REF DIST W H PIXFMT MODEL FEATURES EXPECTED
  for f in $2 $3; do [ -f $W/$f.yuv ] || zstd -q -d -f $G/$f.yuv.zst -o $W/$f.yuv; done
  feat=${8:+:feature=$8}
  echo "\$ VMAFHIP_BACKEND=$1 ffmpeg -i $3.yuv -i $2.yuv -lavfi libvmaf=model=$7$feat (rawvideo $6 $4x$5)"
  VMAFHIP_BACKEND=$1 $FF -hide_banner -nostats -loglevel info -f rawvideo -pix_fmt $6 -s $4x$5 -i $W/$3.yuv \
    -f rawvideo -pix_fmt $6 -s $4x$5 -i $W/$2.yuv \
    -lavfi "libvmaf=model=$7:log_fmt=json:log_path=$W/out.json$feat" -f null - 2>&1 | grep -E "libvmaf|VMAF score" | sort -u
  same $W/out.json $G/$9
}

echo "== 1. golden pairs, the CPU engine and the GPU engine"
A=astronaut_576x324_420p8_12f
F="name=psnr|name=float_ssim|name=float_ms_ssim"
for b in cpu hip; do
  golden $b ${A}_ref ${A}_crf35 576 324 yuv420p version=vmaf_v0.6.1 "$F" ${A}_crf35.vmaf_v0.6.1.json
  golden $b ${A}_ref ${A}_crf35 576 324 yuv420p version=vmaf_v1.0.16_3d0h "" ${A}_crf35.vmaf_v1.0.16_3d0h.json
  golden $b rocket_576x324_420p10_6f_ref rocket_576x324_420p10_6f_crf30 576 324 yuv420p10le version=vmaf_v0.6.1 "$F" \
    rocket_576x324_420p10_6f_crf30.vmaf_v0.6.1.json
  golden $b eveningglow_1920x1080_420p8_3f_ref eveningglow_1920x1080_420p8_3f_crf30 1920 1080 yuv420p version=vmaf_v0.6.1 "$F" \
    eveningglow_1920x1080_420p8_3f_crf30.vmaf_v0.6.1.json
done

echo "== 2. a 1280x720 pan (400 frames) against a blurred copy: ffmpeg's wall time"
[ -f $W/eg.yuv ] || zstd -q -d -f $G/eveningglow_1920x1080_420p8_3f_ref.yuv.zst -o $W/eg.yuv
python3 benches/make_pan.py $W/eg.yuv $W/pan.y4m 1280 720 200 8 > /dev/null
python3 - $W/pan.y4m $W/ref.yuv $W/dist.yuv <<'PY'
import sys
import numpy as np
d = open(sys.argv[1], "rb").read()
head = d.index(b"\n") + 1
w, h = 1280, 720
size = w * h * 3 // 2
ref, dist = open(sys.argv[2], "wb"), open(sys.argv[3], "wb")
frames = [np.frombuffer(d[at + 6:at + 6 + size], np.uint8) for at in range(head, len(d), 6 + size)]
for f in frames + frames[::-1]:
    ref.write(f.tobytes())
    y = f[:w * h].reshape(h, w).astype(np.uint16)
    b = (y + np.roll(y, 1, 0) + np.roll(y, 1, 1) + np.roll(y, (1, 1), (0, 1)) + 2) // 4
    dist.write(b.astype(np.uint8).tobytes() + f[w * h:].tobytes())
PY
time1() {  # time1 BACKEND OUT: one run's wall time
  local s=$EPOCHREALTIME
  VMAFHIP_BACKEND=$1 $FF -hide_banner -nostats -loglevel error -f rawvideo -pix_fmt yuv420p -s 1280x720 -i $W/dist.yuv \
    -f rawvideo -pix_fmt yuv420p -s 1280x720 -i $W/ref.yuv \
    -lavfi "libvmaf=model=version=vmaf_v0.6.1:n_threads=16:log_fmt=json:log_path=$2" -f null -
  awk "BEGIN{print $EPOCHREALTIME - $s}"
}
for r in $(seq $RUNS); do
  echo "run $r: cpu $(time1 cpu $W/pan_cpu.json) s, hip $(time1 hip $W/pan_hip.json) s"
done | tee $W/times.txt
python3 - $W/times.txt <<'PY'
import re, statistics, sys
c, h = [], []
for line in open(sys.argv[1]):
    m = re.search(r"cpu ([\d.]+) s, hip ([\d.]+) s", line)
    c.append(float(m.group(1)))
    h.append(float(m.group(2)))
mc, mh = statistics.median(c), statistics.median(h)
print(f"median: cpu {mc:.3f} s ({400 / mc:.0f} fps), hip {mh:.3f} s ({400 / mh:.0f} fps): {mc / mh:.2f}x")
PY
echo "the GPU's JSON against the CPU's:"
same $W/pan_hip.json $W/pan_cpu.json

echo "== 3. the HIP fork's state calls"
P=$W/${A}_ref.yuv Q=$W/${A}_crf35.yuv
$D/lv/hip_state $P $Q 576 324 420 8 vmaf_v0.6.1 $W/hip_state.json 2>&1
VMAFHIP_BACKEND=cpu $FF -hide_banner -nostats -loglevel error -f rawvideo -pix_fmt yuv420p -s 576x324 -i $Q \
  -f rawvideo -pix_fmt yuv420p -s 576x324 -i $P -lavfi "libvmaf=model=version=vmaf_v0.6.1:log_fmt=json:log_path=$W/cpu.json" -f null -
echo "the GPU state's JSON against the CPU engine's:"
same $W/hip_state.json $W/cpu.json
