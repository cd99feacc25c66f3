#!/bin/bash
# On the GPU machine: VP9, AV1 and 10-bit HEVC through the command's own
# NVDEC path (CODECS picks: default "vp9 av1 hevc10"). For each codec, a
# 1920x1080 pan with grain, master encoded high and low:
#   1. `vmafhip REF DIST --decoder gpu` (NVDEC driven by the command) and
#      `--decoder cpu` (libvpx's vpxdec, libaom's av1dec): which decoder
#      each took, the planes staged through the host, and the two JSONs.
#      Where DEV/clips holds CODEC_cpu.json (and CODEC_cpu_v1.json), the
#      development machine's CPU run of the same files (avdec_h265, the CPU
#      engine) stands for the CPU decoder, and VMAF v1 runs too.
#   2. Wall time, RUNS alternating runs: ffmpeg NVDEC decode only (both
#      files, ffmpeg's vp9 / av1 decoders with -hwaccel cuda), the command
#      with --decoder gpu, and with --decoder cpu.
# Needs DEV/bin/vmafhip.zst, DEV/debs (GStreamer 1.22, libvpx7, libdav1d6),
# DEV/lv (ffmpeg.zst with the vp9 and av1 NVDEC hwaccels, libvmaf.so.zst,
# which it links, libs/) and DEV/clips: pan1080_vp9_{ref,dis}.webm
# (vp9enc deadline=1 cpu-used=8 at 600 and 250 kbit/s) and
# pan1080_av1_{ref,dis}.mkv (av1enc usage-profile=realtime cpu-used=8,
# quantizers 24-32 and 44-52), made from
# `benches/make_pan.py eveningglow_1920x1080_420p8_3f_ref.yuv pan.y4m 1920 1080 240 8 1.5`;
# pan1080_hevc10_{ref,dis}.mp4: the same at 10 bits (120 frames), x265enc
# speed-preset=ultrafast at 3000 and 800 kbit/s.
set -u
D=${DEV:-.device} W=/tmp/nvc RUNS=${RUNS:-3}
mkdir -p $W/lib
. benches/device_gst_env.sh
. benches/device_compare.sh
export PATH=/tmp/gstroot/usr/bin:$PATH
zstd -q -d -f $D/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
zstd -q -d -f $D/lv/ffmpeg.zst -o $W/ffmpeg && chmod +x $W/ffmpeg
zstd -q -d -f $D/lv/libvmaf.so.zst -o $W/lib/libvmaf.so.3
export VMAFHIP_CACHE_DIR=/tmp/vc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

ext() { case $1 in vp9) echo webm ;; av1) echo mkv ;; *) echo mp4 ;; esac; }
for c in ${CODECS:-vp9 av1 hevc10}; do
  set -- $c $(ext $c)
  R=$D/clips/pan1080_$1_ref.$2 S=$D/clips/pan1080_$1_dis.$2 N=240
  [ "$1" = hevc10 ] && N=120
  echo "== 1. $1: the command's NVDEC path against the CPU decoder"
  local_ext=$2
  score() {  # score DECODER OUT [MODEL]: one run, what it said
    echo "\$ vmafhip ref.$local_ext dis.$local_ext --decoder $1 --backend hip --model version=${3:-vmaf_v0.6.1} --json -o out.json"
    GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1 $W/vmafhip $R $S --decoder $1 --backend hip --model version=${3:-vmaf_v0.6.1} \
      --json -o $2 2>&1 | grep -E "input planes so far|^VMAF|rror|note:|^vmafhip:" | sed 's/.*dist_sink: //'
  }
  score gpu $W/$1_gpu.json
  if [ -f $D/clips/$1_cpu.json ]; then
    echo "against the development machine's CPU run (CPU decoder, CPU engine):"
    same $W/$1_gpu.json $D/clips/$1_cpu.json
    score gpu $W/$1_gpu_v1.json vmaf_v1.0.16_3d0h
    echo "VMAF v1 against the development machine's CPU run:"
    same $W/$1_gpu_v1.json $D/clips/$1_cpu_v1.json
  else
    score cpu $W/$1_cpu.json
    same $W/$1_gpu.json $W/$1_cpu.json
  fi

  echo "== 2. $1: wall time ($N frames), $RUNS alternating runs"
  decode_only() { nvdec_decode_only $W/ffmpeg $W/lib:$D/lv/libs $S $R; }
  command_run() { $W/vmafhip $R $S --decoder $1 --backend hip --json -o $W/t.json -q; }
  decode_only || echo "(ffmpeg decode-only failed)"
  for r in $(seq $RUNS); do
    cpu=
    [ -f $D/clips/$1_cpu.json ] || cpu=", vmafhip-decoder-cpu $(seconds command_run cpu) s"
    echo "run $r: ffmpeg-nvdec-decode-only $(seconds decode_only) s, vmafhip-decoder-gpu $(seconds command_run gpu) s$cpu"
  done | tee $W/times_$1.txt
  medians $W/times_$1.txt
done
