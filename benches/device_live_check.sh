#!/bin/bash
# On the GPU machine: a live QA station at 1080p on the GPU engine, with a
# natural picture (a pan across the golden photograph with grain,
# benches/make_pan.py at 1280x720 scaled to 1920x1080, 200 frames).
#   1. Live loopback: one gst-launch sends the reference as MPEG-TS over
#      UDP (OpenH264 at 10 Mbit/s, the ingest feed) and a 3 Mbit/s transcode
#      that starts 5 frames late and drops reference frames 60 and 130;
#      vmafhip scores the two udp:// URIs with --align auto --backend hip
#      for 25 s; the endpoint is scraped mid-run.
#   2. Alignment's cost on a 1080p file pair of 600 frames (a pan at
#      960x540 scaled to 1920x1080, 300 frames there and back): the master
#      as Y4M against a 4 Mbit/s H.264 encode with 5 leading frames, and
#      against that encode decoded to Y4M. The command's wall time with
#      --align auto against --align off, alternating, RUNS each.
# Needs DEV/debs (benches/device_debs.sh) and DEV/bin/vmafhip.zst.
set -u
. benches/device_gst_env.sh
W=/tmp/live
RUNS=${RUNS:-5}
mkdir -p $W
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -q -d -f $D/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
V=$W/vmafhip
zstd -q -d -f tests/data/golden/eveningglow_1920x1080_420p8_3f_ref.yuv.zst -o $W/eg.yuv
python3 benches/make_pan.py $W/eg.yuv $W/pan.y4m 1280 720 200 8
up="videoconvert ! videoscale ! video/x-raw,width=1920,height=1080,format=I420"
$GL -q filesrc location=$W/pan.y4m ! y4mdec ! $up ! y4menc ! filesink location=$W/ref.y4m
# The transcode's source: the reference from frame 5, less 60 and 130.
python3 - $W/ref.y4m $W/dist.y4m <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head = d.index(b"\n") + 1
size = 6 + 1920 * 1080 * 3 // 2
frames = [d[i:i + size] for i in range(head, len(d), size)]
shown = [f for i, f in enumerate(frames) if i >= 5 and i not in (60, 130)]
open(sys.argv[2], "wb").write(d[:head] + b"".join(shown))
print(f"reference {len(frames)} frames, transcode {len(shown)}")
open("/tmp/live/sent.txt", "w").write("x\n" * len(shown))
PY
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

live_check() {
echo "== 1. live: udp:// REF and DIST, --align auto --backend hip"
# --decoder ${LIVE_DECODER:-cpu}: OpenH264 writes no frame rate in its
# headers, and GStreamer 1.22's nvh264dec then reports no latency, which
# stalls a live pipeline.
$V udp://127.0.0.1:5600 udp://127.0.0.1:5601 --align auto --duration 25 --window 2 \
  --metrics 9464 --backend hip --decoder ${LIVE_DECODER:-cpu} --progress -o $W/live.jsonl 2> $W/live.err &
PID=$!
for i in $(seq 600); do grep -q "note: scoring" $W/live.err && break; sleep 0.1; done
send() { echo "filesrc location=$1 ! y4mdec ! openh264enc bitrate=$2 gop-size=30 ! h264parse ! mpegtsmux ! udpsink host=127.0.0.1 port=$3 sync=true max-bitrate=400000000"; }
$GL -q $(send $W/ref.y4m 10000000 5600) $(send $W/dist.y4m 3000000 5601) &
SENDER=$!
sleep 9
python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:9464/metrics').read().decode())" > $W/metrics.txt
wait $PID
echo "exit $?"
wait $SENDER
tr '\r' '\n' < $W/live.err | sed 's/\x1b\[K//g' | grep -v '^live ' | grep -v '^$'
echo "status line, every 25th:"
tr '\r' '\n' < $W/live.err | sed 's/\x1b\[K//g' | grep '^live ' | awk 'NR % 25 == 1'
echo "metrics scraped at 9 s:"
grep -E '^vmafhip_(backend|frames_scored|frames_dropped|frames_duplicated|align_offset|window_vmaf|fps)' $W/metrics.txt
python3 - $W/live.jsonl $W/sent.txt <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
frames = sum(1 for l in lines if "frameNum" in l)
inputs = next(l["inputs"] for l in lines if "inputs" in l)
print(f"offset {inputs['offset']} (confidence {inputs['offset_confidence']}), dropped {inputs['dropped_frames']}, duplicated {inputs['duplicated_frames']}, {frames} frames scored of {sum(1 for _ in open(sys.argv[2]))} sent")
PY
}
[ -n "${ONLY_FILES:-}" ] || live_check

timing() {  # timing LABEL DIST: off and auto alternating, then the medians
  echo "== 2$1. wall time, master.y4m against $2: --align off then auto, alternating ($RUNS runs each)"
  $V $W/master.y4m $2 --align auto 2>&1 | grep -E 'align|^VMAF|decod'
  for r in $(seq $RUNS); do
    for mode in ${MODES:-off auto}; do
      s=$EPOCHREALTIME
      $V $W/master.y4m $2 --align $mode --allow-length-mismatch -q
      e=$EPOCHREALTIME
      echo "run $r --align $mode: $(awk "BEGIN{print $e - $s}") s"
    done
  done | tee $W/times$1.txt
  python3 - $W/times$1.txt <<'PY'
import re, statistics, sys
t = {}
for line in open(sys.argv[1]):
    m = re.search(r"--align (\S+): ([\d.]+) s", line)
    if m:
        t.setdefault(m.group(1), []).append(float(m.group(2)))
o = statistics.median(t["off"])
for mode, runs in t.items():
    if mode != "off":
        a = statistics.median(runs)
        print(f"median: off {o:.3f} s, {mode} {a:.3f} s: {mode} adds {100 * (a / o - 1):.1f}%")
PY
}
[ -n "${ONLY_LIVE:-}" ] && exit 0
python3 benches/make_pan.py $W/eg.yuv $W/pan540.y4m 960 540 300 8
$GL -q filesrc location=$W/pan540.y4m ! y4mdec ! $up ! y4menc ! filesink location=$W/there.y4m
python3 - $W/there.y4m $W/master.y4m $W/lead5.y4m <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
head = d.index(b"\n") + 1
size = 6 + 1920 * 1080 * 3 // 2
frames = [d[i:i + size] for i in range(head, len(d), size)]
frames += frames[::-1]
open(sys.argv[2], "wb").write(d[:head] + b"".join(frames))
open(sys.argv[3], "wb").write(d[:head] + b"".join(frames[-5:] + frames))
print(f"master {len(frames)} frames")
PY
$GL -q filesrc location=$W/lead5.y4m ! y4mdec ! openh264enc bitrate=4000000 ! h264parse \
  ! mp4mux ! filesink location=$W/enc.mp4
timing a $W/enc.mp4
$GL -q filesrc location=$W/enc.mp4 ! decodebin ! videoconvert ! video/x-raw,format=I420 ! y4menc \
  ! filesink location=$W/enc_dec.y4m
timing b $W/enc_dec.y4m
