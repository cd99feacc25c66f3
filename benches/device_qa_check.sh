#!/bin/bash
# On the GPU machine: what a QA station uses, on the GPU engine and the GPU
# decoders, with a natural 1080p pair: a pan across the golden photograph
# with grain (benches/make_pan.py at 1280x720, scaled to 1920x1080): the
# master as Y4M, and a 4 Mbit/s H.264 encode (OpenH264, the encoder the
# device's packages have) that starts with 5 frames the master lacks (an
# encoder's leading delay).
#   1. --align auto finds the offset, and scores as --align 5 does;
#   2. its cost: the command's wall time with --align auto against
#      --align 5 (the offset given), alternating, RUNS runs each;
#   3. --window, --alert-below and --metrics on the GPU.
# Needs DEV/debs (benches/device_debs.sh) and DEV/bin/vmafhip.zst.
set -u
. benches/device_gst_env.sh
W=/tmp/qa
RUNS=${RUNS:-5}
mkdir -p $W
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -q -d -f $D/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
V=$W/vmafhip
zstd -q -d -f tests/data/golden/eveningglow_1920x1080_420p8_3f_ref.yuv.zst -o $W/eg.yuv
python3 benches/make_pan.py $W/eg.yuv $W/pan.y4m 1280 720 200 8
# The encode's source: 5 frames from the clip's end, then the clip.
python3 - $W/pan.y4m $W/pan_lag5.y4m <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head = d.index(b"\n") + 1
size = 6 + 1280 * 720 * 3 // 2
frames = [d[i:i + size] for i in range(head, len(d), size)]
open(sys.argv[2], "wb").write(d[:head] + b"".join(frames[-5:] + frames))
PY
up="videoconvert ! videoscale ! video/x-raw,width=1920,height=1080,format=I420"
$GL -q filesrc location=$W/pan.y4m ! y4mdec ! $up ! y4menc ! filesink location=$W/ref.y4m
$GL -q filesrc location=$W/pan_lag5.y4m ! y4mdec ! $up ! openh264enc bitrate=4000000 ! h264parse \
  ! mp4mux ! filesink location=$W/dist.mp4
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
ls -l $W/ref.y4m $W/dist.mp4 | awk '{print $5, $9}'

echo "== 1. unaligned, --align auto, --align 5"
$V $W/ref.y4m $W/dist.mp4 --allow-length-mismatch 2>&1 | tail -1
$V $W/ref.y4m $W/dist.mp4 --align auto --json -o $W/auto.json 2>&1 | grep -E 'align|^VMAF'
$V $W/ref.y4m $W/dist.mp4 --align 5 --json -o $W/given.json 2>&1 | grep -E '^VMAF'
python3 - $W/auto.json $W/given.json <<'PY'
import json, sys
a, g = (json.load(open(p)) for p in sys.argv[1:])
va = [f["metrics"] for f in a["frames"]]
vg = [f["metrics"] for f in g["frames"]]
print(f"auto against given: {len(va)} frames, identical: {va == vg}, offset {a['inputs']['offset']}, confidence {a['inputs']['offset_confidence']}")
PY

echo "== 2. wall time, --align 5 then --align auto, alternating ($RUNS runs each)"
for r in $(seq $RUNS); do
  for mode in 5 auto; do
    s=$EPOCHREALTIME
    $V $W/ref.y4m $W/dist.mp4 --align $mode -q
    e=$EPOCHREALTIME
    echo "run $r --align $mode: $(awk "BEGIN{print $e - $s}") s"
  done
done | tee $W/times.txt
python3 - $W/times.txt <<'PY'
import re, statistics, sys
t = {"5": [], "auto": []}
for line in open(sys.argv[1]):
    m = re.search(r"--align (\S+): ([\d.]+) s", line)
    if m:
        t[m.group(1)].append(float(m.group(2)))
g, a = statistics.median(t["5"]), statistics.median(t["auto"])
print(f"median: given {g:.3f} s, auto {a:.3f} s: auto adds {100 * (a / g - 1):.1f}%")
PY

echo "== 3. windows, alerts and metrics on the GPU"
$V $W/ref.y4m $W/dist.mp4 --align auto --window 2 --alert-below 99 --metrics 0 \
  --on-alert 'echo "hook: $VMAFHIP_ALERT at $VMAFHIP_WINDOW_START s, VMAF $VMAFHIP_VMAF"' 2>&1
