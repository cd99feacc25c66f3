#!/bin/bash
# On the GPU machine: many compressed pairs at once against the decoders'
# limit, and a chroma-reading model on NVDEC frames.
#   1. 16 copies of a 1080p H.264 pair (DEV/clips/pan1080_{ref,dis}.mp4,
#      240 frames: the pan of benches/make_pan.py, x264enc at 4000 and 1200
#      kbit/s), RUNS alternating runs: ffmpeg NVDEC decode only, 16
#      processes at once (each decoding both files), against
#      `vmafhip --pairs` with --jobs JOBS (default "16 8"). Aggregate
#      pair-frames per second; the decoders' utilisation sampled by
#      nvidia-smi during each run (the peak, in percent).
#   2. One pair with vmaf_v1.0.16_3d0h (speed_chroma reads the chroma
#      NVDEC leaves interleaved) beside vmaf_v0.6.1 and decode only.
# Needs DEV/bin/vmafhip.zst, DEV/debs, DEV/lv (ffmpeg.zst, libvmaf.so.zst,
# libs/) and the clips.
set -u
D=${DEV:-.device} W=/tmp/pd RUNS=${RUNS:-3} N=240
mkdir -p $W/lib
. benches/device_gst_env.sh
. benches/device_compare.sh
export PATH=/tmp/gstroot/usr/bin:$PATH VMAFHIP_CACHE_DIR=/tmp/vc
zstd -q -d -f $D/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
zstd -q -d -f $D/lv/ffmpeg.zst -o $W/ffmpeg && chmod +x $W/ffmpeg
zstd -q -d -f $D/lv/libvmaf.so.zst -o $W/lib/libvmaf.so.3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
R=$D/clips/pan1080_ref.mp4 S=$D/clips/pan1080_dis.mp4
: > $W/list.csv
for k in $(seq 16); do echo "$R,$S,$W/pair$k.json" >> $W/list.csv; done

decode_one() { nvdec_decode_only $W/ffmpeg $W/lib:$D/lv/libs $S $R; }
decode_16() {
  for k in $(seq 16); do decode_one & done
  wait
}
pairs() { $W/vmafhip --pairs $W/list.csv --decoder gpu --backend hip --jobs $1 -q > /dev/null; }
# peak CMD...: runs CMD, sampling the decoders' utilisation; prints "SECONDS s (decoders PEAK%)"
peak() {
  nvidia-smi --query-gpu=utilization.decoder --format=csv,noheader,nounits -lms 100 > $W/util.txt 2>/dev/null &
  local mon=$! t
  t=$(seconds "$@")
  kill $mon 2> /dev/null; wait $mon 2> /dev/null
  echo "$t s (decoders $(sort -n $W/util.txt | tail -1)%)"
}

echo "== 1. 16 pairs of 1080p H.264 ($N frames each), $RUNS alternating runs"
echo "\$ vmafhip --pairs list.csv --decoder gpu --backend hip --jobs J -q    (16 lines: ref.mp4,dis.mp4,out.json)"
for r in $(seq $RUNS); do
  line="run $r: ffmpeg-16-processes $(peak decode_16)"
  for j in ${JOBS:-16 8}; do line="$line, vmafhip-pairs-jobs-$j $(peak pairs $j)"; done
  echo "$line"
done | tee $W/times.txt
N=$((16 * N)) medians $W/times.txt
same $W/pair1.json $W/pair16.json

echo "== 2. one pair, a chroma-reading model on NVDEC frames, $RUNS alternating runs"
one() { $W/vmafhip $R $S --decoder gpu --backend hip --model version=$1 --json -o $W/$1.json -q; }
GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1 $W/vmafhip $R $S --decoder gpu --backend hip --model version=vmaf_v1.0.16_3d0h 2>&1 \
  | grep -E "input planes so far|^VMAF" | sed 's/.*dist_sink: //'
for r in $(seq $RUNS); do
  echo "run $r: decode-only $(seconds decode_one) s, vmaf-v0 $(seconds one vmaf_v0.6.1) s, vmaf-v1 $(seconds one vmaf_v1.0.16_3d0h) s"
done | tee $W/times1.txt
medians $W/times1.txt
