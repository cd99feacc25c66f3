#!/bin/bash
# On the GPU machine: four live QA stations at once, each a vmafhip command
# (--align auto --backend hip --decoder gpu) scoring a 1080p reference and
# its transcode received as MPEG-TS on loopback UDP. The reference is a pan
# across the golden photograph with grain (benches/make_pan.py, 1920x1080,
# 450 frames: 15 s); the transcode starts 5 frames late and drops reference
# frames 60 and 130. Both are encoded once with x264 (10 and 3 Mbit/s), and
# each station's pair is sent in real time from those files (tsparse
# timestamps, udpsink sync), the senders going on 3 s past the checked
# frames. Prints, per station: frames scored of those sent, offset, drops,
# duplicates, late frames, mean VMAF, the CPU time the command used; and
# the GPU's utilisation (nvidia-smi every 0.5 s) and memory per process.
# Needs DEV/debs (benches/device_debs.sh) and DEV/bin/vmafhip.zst (or BIN).
set -u
. benches/device_gst_env.sh
W=/tmp/four
STATIONS=${STATIONS:-4}
mkdir -p $W
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -q -d -f "${BIN:-$D/bin/vmafhip.zst}" -o $W/vmafhip && chmod +x $W/vmafhip
V=$W/vmafhip
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nproc

. benches/device_ts_pair.sh
ts_pair $W 1920 1080 540 2 10000 3000 || exit 1
ls -la $W/ref.ts $W/dist.ts

PIDS=()
for k in $(seq 0 $((STATIONS - 1))); do
  p=$((5600 + 2 * k))
  ( timeout -k 10 60 $V udp://127.0.0.1:$p udp://127.0.0.1:$((p + 1)) --align auto --duration 22 --window 2 \
      --backend hip --decoder gpu --progress -o $W/s$k.jsonl 2> $W/s$k.err; times > $W/s$k.times ) &
  PIDS+=($!)
done
for k in $(seq 0 $((STATIONS - 1))); do
  for i in $(seq 600); do grep -q "note: scoring" $W/s$k.err && break; sleep 0.1; done
done
nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 > $W/gpu.csv &
SMI=$!
# Each sender encodes as a transcoder's output does, in real time.
send() {
  echo "filesrc location=$1 ! rawvideoparse width=1920 height=1080 format=i420 framerate=30/1 \
    ! x264enc bitrate=$2 key-int-max=30 speed-preset=ultrafast tune=zerolatency threads=2 \
    ! mpegtsmux ! udpsink host=127.0.0.1 port=$3 sync=true"
}
for k in $(seq 0 $((STATIONS - 1))); do
  p=$((5600 + 2 * k))
  $GL -q $(send $W/pan.yuv 10000 $p) $(send $W/dist.yuv 3000 $((p + 1))) &
  PIDS+=($!)
done
sleep 12
nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader
wait "${PIDS[@]}"
kill $SMI 2>/dev/null
for k in $(seq 0 $((STATIONS - 1))); do
  echo "== station $k"
  tr '\r' '\n' < $W/s$k.err | sed 's/\x1b\[K//g' | grep -v '^live ' | grep -v '^window ' | grep -v '^$'
  tr '\r' '\n' < $W/s$k.err | sed 's/\x1b\[K//g' | grep '^live ' | tail -1
  python3 - $W/s$k.jsonl <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
frames = [l for l in lines if "frameNum" in l]
inputs = next(l["inputs"] for l in lines if "inputs" in l)
vmaf = [f["metrics"]["vmaf"] for f in frames]
print(f"scored {len(frames)} (the checked transcode shows 443, then its tail), offset {inputs['offset']} "
      f"(confidence {inputs['offset_confidence']}), dropped {inputs['dropped_frames']}, "
      f"duplicated {inputs['duplicated_frames']}, late {inputs['late_frames']}, "
      f"reference frames {inputs['reference_frames']}, mean VMAF {sum(vmaf) / max(len(vmaf), 1):.3f}")
PY
  echo "CPU time (user, system) of the command: $(tail -1 $W/s$k.times)"
done
python3 - $W/gpu.csv <<'PY'
import sys
rows = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
u = sorted(float(r[0]) for r in rows)
m = [float(r[1]) for r in rows]
print(f"GPU utilisation over {len(u)} samples: mean {sum(u) / len(u):.1f}%, median {u[len(u) // 2]:.0f}%, max {u[-1]:.0f}%; memory used max {max(m):.0f} MiB")
PY
