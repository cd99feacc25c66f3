#!/bin/bash
# GStreamer 1.28's HIP memory into vmafhip, on the GPU machine (NVIDIA: GstHip's
# NVIDIA vendor), through Debian sid's GStreamer (benches/device_sid_env.sh):
#   1. what 1.28 lists: the hip plugin's elements, vmafhip's pads;
#   2. exactness: each HIP-memory pipeline against the CPU engine on the same
#      frames (every metric of every frame equal), with the planes staged
#      through the host (0 expected) and the src pad's HIP memory;
#   3. a bench row: a 1080p pair (1440 frames) through hipupload, against system memory and
#      cudaupload, and nvh264dec into vmafhip directly and through hipupload.
# Needs in $DEV (default .device): sid.tar.xz, plugin/libgstvmafhip.so,
# clips/h264_ref.mp4 and clips/h264_dis.mp4 (1080p H.264, 240 frames).
# usage from the repository root: bash benches/device_hip_memory.sh [RUNS]
set -euo pipefail
RUNS=${1:-3}
. benches/device_sid_env.sh
export VMAFHIP_CACHE_DIR=/tmp/vc GST_DEBUG_NO_COLOR=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat /tmp/sid/VERSIONS

echo "== 1. GStreamer 1.28: the hip plugin and vmafhip's pads"
$GI hip 2>&1 | grep -E "^ *hip[a-z]+:" || { echo "the hip plugin has no elements"; exit 1; }
$GI vmafhip | awk '/template:/ {t=$0} /memory:HIPMemory/ {print t, "->", $1}'

echo "== decode the clips to NV12 on the GPU (system memory), 240 frames"
for s in ref dis; do
  $GL -q filesrc location="$D/clips/h264_$s.mp4" ! qtdemux ! h264parse ! nvh264dec ! \
    video/x-raw,format=NV12 ! filesink location=/tmp/$s.nv12
done
ls -la /tmp/ref.nv12 /tmp/dis.nv12
head -c $((3110400 * 48)) /tmp/ref.nv12 > /tmp/ref48.nv12
head -c $((3110400 * 48)) /tmp/dis.nv12 > /tmp/dis48.nv12
RAW="rawvideoparse width=1920 height=1080 format=nv12 framerate=25/1"
MP4="qtdemux ! h264parse ! nvh264dec"

# score NAME BACKEND REF_BRANCH DIS_BRANCH [SRC_CAPS]: one run, its JSON in
# /tmp/NAME.json, its planes line printed.
score() {
  local name=$1 backend=$2 r=$3 d=$4 out=${5:-}
  GST_DEBUG=vmafhip:5 $GL $r ! v.ref_sink $d ! v.dist_sink \
    vmafhip name=v backend=$backend results-filename=/tmp/$name.json ! ${out:+$out !} fakesink \
    > /tmp/$name.log 2>&1 || { echo "$name FAILED"; grep -iE "error|warn" /tmp/$name.log | head; exit 1; }
  echo "$name ($backend): $(grep -o 'pooled VMAF.*' /tmp/$name.log | head -1)"
  grep -oE "proposing a [^ ]+ pool|answered [^ ]+ context query|sink pads also take .*|system memory input only" /tmp/$name.log | sort | uniq -c || true
}
same() {
  python3 - "$1" "$2" << 'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
fa, fb = a["frames"], b["frames"]
assert len(fa) == len(fb) and fa, f"{len(fa)} frames vs {len(fb)}"
n = 0
for x, y in zip(fa, fb):
    assert x["metrics"].keys() == y["metrics"].keys(), x["frameNum"]
    for k, v in x["metrics"].items():
        assert v == y["metrics"][k], f"frame {x['frameNum']} {k}: {v} vs {y['metrics'][k]}"
        n += 1
print(f"  equal: {len(fa)} frames, {n} values, pooled VMAF {a['pooled_metrics']['vmaf']['mean']}")
EOF
}
staged() { grep -oE "input planes so far: [0-9]+ staged" /tmp/$1.log | tail -1 | grep -q ": 0 staged" ||
  { echo "$1: planes staged through the host"; exit 1; }; }

echo "== 2. HIP memory against the CPU engine on the same frames"
UP='hipupload ! video/x-raw(memory:HIPMemory)'
R="filesrc location=/tmp/ref.nv12 ! $RAW"
S="filesrc location=/tmp/dis.nv12 ! $RAW"
score cpu_raw cpu "$R" "$S"
score hipupload hip "$R ! $UP" "$S ! $UP" 'video/x-raw(memory:HIPMemory)'
same /tmp/hipupload.json /tmp/cpu_raw.json
staged hipupload
R48="filesrc location=/tmp/ref48.nv12 ! $RAW ! hipupload"
S48="filesrc location=/tmp/dis48.nv12 ! $RAW ! hipupload"
for f in I420 NV12 I420_10LE P010_10LE Y444; do
  CONV="hipconvert ! video/x-raw(memory:HIPMemory),format=$f"
  score "hipconvert_$f" hip "$R48 ! $CONV" "$S48 ! $CONV"
  score "hipconvert_${f}_cpu" cpu "$R48 ! $CONV ! hipdownload" "$S48 ! $CONV ! hipdownload"
  same "/tmp/hipconvert_$f.json" "/tmp/hipconvert_${f}_cpu.json"
  staged "hipconvert_$f"
done
DEC="filesrc location=$D/clips/h264_ref.mp4 ! $MP4"
DEC2="filesrc location=$D/clips/h264_dis.mp4 ! $MP4"
score nvdec_cpu cpu "$DEC ! video/x-raw" "$DEC2 ! video/x-raw"
score nvdec_hipupload hip "$DEC ! video/x-raw(memory:CUDAMemory) ! $UP" "$DEC2 ! video/x-raw(memory:CUDAMemory) ! $UP"
same /tmp/nvdec_hipupload.json /tmp/nvdec_cpu.json
staged nvdec_hipupload
same /tmp/nvdec_cpu.json /tmp/cpu_raw.json

echo "== 3. bench: 1080p, 1440 frames (the pair six times), $RUNS runs each"
for i in 1 2 3 4 5 6; do cat /tmp/ref.nv12; done > /tmp/ref1440.nv12
for i in 1 2 3 4 5 6; do cat /tmp/dis.nv12; done > /tmp/dis1440.nv12
bench() {
  local label=$1 r=$2 d=$3 frames=$4 t
  for k in $(seq "$RUNS"); do
    GST_DEBUG=vmafhip:4 $GL $r ! v.ref_sink $d ! v.dist_sink vmafhip name=v backend=hip ! fakesink > /tmp/b.log 2>&1 ||
      { echo "$label failed"; grep -iE "error" /tmp/b.log | head -3; return 1; }
    t=$(grep -o "Execution ended after [0-9:.]*" /tmp/b.log | awk '{print $4}')
    awk -v t="$t" -v f="$frames" -v l="$label" -v k="$k" 'BEGIN { split(t, a, ":"); s = a[1]*3600 + a[2]*60 + a[3]; printf "%s run %d: %.1f fps (%.3f s)\n", l, k, f / s, s }'
  done
  echo "  $(grep -oE 'input planes so far: [0-9]+ staged, [0-9]+ from pinned memory|[0-9]+ on the device' /tmp/b.log | tr '\n' ' ')"
}
BR="filesrc blocksize=3110400 location=/tmp/ref1440.nv12 ! $RAW"
BD="filesrc blocksize=3110400 location=/tmp/dis1440.nv12 ! $RAW"
bench "system memory (rawvideoparse)" "$BR" "$BD" 1440
bench "hipupload, HIP memory" "$BR ! $UP" "$BD ! $UP" 1440
bench "cudaupload, CUDA memory" "$BR ! cudaupload ! video/x-raw(memory:CUDAMemory)" "$BD ! cudaupload ! video/x-raw(memory:CUDAMemory)" 1440
bench "nvh264dec, CUDA memory" "$DEC ! video/x-raw(memory:CUDAMemory)" "$DEC2 ! video/x-raw(memory:CUDAMemory)" 240
bench "nvh264dec ! hipupload, HIP memory" "$DEC ! video/x-raw(memory:CUDAMemory) ! $UP" "$DEC2 ! video/x-raw(memory:CUDAMemory) ! $UP" 240
echo "== done"
