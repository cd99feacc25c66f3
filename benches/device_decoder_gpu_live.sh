#!/bin/bash
# On the GPU machine: why live stations decoding with --decoder gpu score
# wrong pictures. A 720p pan (benches/make_pan.py, 300 frames at 30 fps)
# and its transcode (from frame 5, reference frames 60 and 130 dropped),
# both x264 in MPEG-TS, sent in real time over loopback UDP to stations
# side by side, each 14 s:
#   a. --backend hip --decoder gpu          (the failing case)
#   b. --backend cpu --decoder gpu          (the engine out of the question)
#   c. a. with VMAFHIP_COPY_ON_ARRIVAL=0    (no pinned copy on arrival)
#   d. --backend hip --decoder cpu          (the control)
#   e. a. with --align off                  (GPU memory to the element)
# then the same two files scored as files (--decoder gpu, GStreamer's
# nvh264dec and the command's NVDEC), and nvh264dec's frames against
# openh264dec's (md5 of each decode to raw I420).
# Needs DEV/debs (benches/device_debs.sh) and DEV/bin/vmafhip.zst.
set -u
. benches/device_gst_env.sh
W=/tmp/decgpu
mkdir -p $W
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -q -d -f "$D"/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
V=$W/vmafhip
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
. benches/device_ts_pair.sh
ts_pair $W 1280 720 300 1 8000 2000 || exit 1
ls -la $W/ref.ts $W/dist.ts

station() {  # station NAME PORT ARGS... (environment from the caller)
  local name=$1 port=$2; shift 2
  timeout -k 5 40 $V udp://127.0.0.1:$port udp://127.0.0.1:$((port + 1)) --duration 12 --align auto \
    -o $W/$name.jsonl "$@" 2> $W/$name.err
  echo "exit $?" >> $W/$name.err
}
GST_DEBUG=vmafhip*:4 GST_DEBUG_FILE=$W/a.gstlog station a 5600 --backend hip --decoder gpu &
VMAFHIP_COPY_ON_ARRIVAL=0 station c 5620 --backend hip --decoder gpu &
station d 5630 --backend hip --decoder cpu &
GST_DEBUG=vmafhip*:4 GST_DEBUG_FILE=$W/e.gstlog station e 5640 --backend hip --decoder gpu --align off &
sleep 2
send() {
  echo "filesrc location=$W/$1 ! rawvideoparse width=1280 height=720 format=i420 framerate=30/1 \
    ! x264enc bitrate=$2 key-int-max=30 speed-preset=ultrafast tune=zerolatency threads=2 \
    ! mpegtsmux ! udpsink host=127.0.0.1 port=$3 sync=true"
}
for p in 5600 5620 5630 5640; do
  $GL -q $(send pan.yuv 8000 $p) $(send dist.yuv 2000 $((p + 1))) &
done
wait
for s in a c d e; do
  echo "== station $s"
  grep -vE '^(live|window) ' $W/$s.err | tail -12
  python3 - $W/$s.jsonl <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
frames = [l for l in lines if "frameNum" in l]
inputs = next((l["inputs"] for l in lines if "inputs" in l), {})
vmaf = [f["metrics"]["vmaf"] for f in frames]
print(f"scored {len(frames)}, inputs {inputs}, mean VMAF {sum(vmaf) / max(len(vmaf), 1):.3f}")
print("first 8 VMAF:", [round(v, 2) for v in vmaf[:8]], "last 4:", [round(v, 2) for v in vmaf[-4:]])
PY
done
for s in a e; do
  echo "== element log of $s: caps and memory"
  grep -iE "caps|memory|pool|format" $W/$s.gstlog | sed 's/^.*vmafhip[a-z]*[^ ]* //' | sort | uniq -c | sort -rn | head -14
done
echo "== files: --decoder gpu through GStreamer's nvh264dec, then the command's NVDEC"
VMAFHIP_NVDEC=0 $V $W/ref.ts $W/dist.ts --decoder gpu --backend hip --align auto 2>&1 | grep -E '^VMAF|align|decod|error' | head -5
$V $W/ref.ts $W/dist.ts --decoder gpu --backend hip --align auto 2>&1 | grep -E '^VMAF|align|decod|error' | head -5
echo "== decoders' frames (md5 of raw I420): nvh264dec, openh264dec"
for dec in nvh264dec openh264dec; do
  $GL -q filesrc location=$W/dist.ts ! tsdemux ! h264parse ! $dec ! videoconvert \
    ! video/x-raw,format=I420 ! filesink location=$W/$dec.yuv
  echo "$dec $(stat -c %s $W/$dec.yuv) $(md5sum < $W/$dec.yuv | cut -c1-16)"
done
