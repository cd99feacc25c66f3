#!/bin/bash
# On the GPU machine: ffmpeg 7.1.5's libvmaf_cuda filter (NVDEC frames,
# scale_cuda, libvmaf_cuda) on vmafhip's libvmaf.so.3, beside libvmaf
# f85a8536's own. One ffmpeg binary, built on the development machine
# against libvmaf f85a8536's headers and linked to libvmaf.so.3 (the log
# header says how), runs on either library through LD_LIBRARY_PATH.
#   PART=peer (needs LV_REAL, the folder of libvmaf f85a8536's own
#   libvmaf.so.3 built with CUDA):
#     1. libvmaf's C path (its CPU libvmaf filter, software decoding):
#        the numbers every other run is held to.
#     2. libvmaf_cuda, VMAF v0: vmafhip's and libvmaf's, each against 1.
#     3. VMAF v1 through libvmaf_cuda: ffmpeg 7.1 copies luma alone into
#        the pictures (vmafhip refuses, naming why); ffmpeg_allplanes,
#        the same source with that loop's `break` removed, copies every
#        plane (vmafhip's numbers against libvmaf's C path); libvmaf's own.
#     4. Wall time, RUNS alternating runs: NVDEC decode only, libvmaf_cuda
#        on libvmaf, on vmafhip.
#     5. tests/c/cuda_pictures (its own CUDA context, cuMemcpy2D into the
#        device pictures; the HIP twins' calls in the primary context) on
#        golden pairs against libvmaf's golden JSON. PART=pictures: 5 alone.
#     6. The CPU libvmaf filter on the pair decoded to raw files, RUNS
#        alternating runs, 16 threads: libvmaf's own, vmafhip's CPU
#        engine, vmafhip with VMAFHIP_BACKEND=hip; their JSONs.
#   PART=command (needs DEV/bin/vmafhip.zst and DEV/debs):
#     7. Wall time, RUNS alternating runs: NVDEC decode only, libvmaf_cuda
#        on vmafhip, `vmafhip REF DIST --decoder gpu`; their JSONs.
# Needs DEV/lv (libvmaf.so.zst, ffmpeg.zst, ffmpeg_allplanes.zst,
# cuda_pictures, libs/), DEV/clips (pan1080_ref.mp4, pan1080_dis.mp4:
# benches/make_pan.py ... 1920 1080 240 8 1.5, x264enc at 4000 and 1200
# kbit/s), and DEV/debs' zstd where the machine has none.
set -u
D=${DEV:-.device} W=/tmp/lvc RUNS=${RUNS:-3} PART=${PART:-peer}
mkdir -p $W/ours
Z=
if ! command -v zstd > /dev/null; then
  for d in $D/debs/libzstd1_*.deb $D/debs/zstd_*.deb; do dpkg -x $d $W/z; done
  export PATH=$W/z/usr/bin:$PATH
  Z=:$W/z/usr/lib/x86_64-linux-gnu
fi
zstd -q -d -f $D/lv/libvmaf.so.zst -o $W/ours/libvmaf.so.3
for f in ffmpeg ffmpeg_allplanes; do zstd -q -d -f $D/lv/$f.zst -o $W/$f && chmod +x $W/$f; done
export VMAFHIP_CACHE_DIR=/tmp/vc
L=$D/lv/libs$Z OURS=$W/ours:$D/lv/libs$Z REAL=${LV_REAL:-/nonexistent}:$D/lv/libs$Z
R=$D/clips/pan1080_ref.mp4 S=$D/clips/pan1080_dis.mp4 N=240
HW="-hwaccel cuda -hwaccel_output_format cuda"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
. benches/device_compare.sh

# cuda LIBPATH FFMPEG MODEL OUT: libvmaf_cuda on the NVDEC frames of the
# pair (ffmpeg's log level LOGLEVEL, default error).
cuda() {
  LD_LIBRARY_PATH=$1 $2 -hide_banner -nostats -loglevel ${LOGLEVEL:-error} $HW -i $S $HW -i $R -filter_complex \
    "[0:v]scale_cuda=format=yuv420p[d];[1:v]scale_cuda=format=yuv420p[r];[d][r]libvmaf_cuda=model=version=$3:log_fmt=json:log_path=$4" \
    -f null -
}
decode_only() { nvdec_decode_only $W/ffmpeg $OURS $S $R; }
if [ "$PART" = peer ]; then
  echo "== 1. libvmaf's C path: its CPU libvmaf filter, software decoding, 16 threads"
  for m in vmaf_v0.6.1 vmaf_v1.0.16_3d0h; do
    LD_LIBRARY_PATH=$REAL $W/ffmpeg -hide_banner -nostats -loglevel error -i $S -i $R \
      -lavfi "libvmaf=model=version=$m:n_threads=16:log_fmt=json:log_path=$W/c_$m.json" -f null - \
      && python3 -c "import json; print('$m: VMAF', json.load(open('$W/c_$m.json'))['pooled_metrics']['vmaf']['mean'])"
  done

  echo "== 2. libvmaf_cuda, vmaf_v0.6.1, against libvmaf's C path"
  echo "\$ ffmpeg $HW -i dis.mp4 $HW -i ref.mp4 -filter_complex '[0:v]scale_cuda=format=yuv420p[d];[1:v]scale_cuda=format=yuv420p[r];[d][r]libvmaf_cuda=model=version=vmaf_v0.6.1:...'"
  echo "-- on vmafhip's libvmaf.so.3 (its INFO lines):"
  LOGLEVEL=info cuda $OURS $W/ffmpeg vmaf_v0.6.1 $W/ours_v0.json 2>&1 | grep -E "vmafhip|VMAF score|rror" | sort -u
  same $W/ours_v0.json $W/c_vmaf_v0.6.1.json
  echo "-- on libvmaf f85a8536's own:"
  cuda $REAL $W/ffmpeg vmaf_v0.6.1 $W/real_v0.json 2>&1 | tail -3
  same $W/real_v0.json $W/c_vmaf_v0.6.1.json

  echo "== 3. VMAF v1 (vmaf_v1.0.16_3d0h) through libvmaf_cuda"
  echo "-- ffmpeg 7.1.5 as released (copies luma alone), on vmafhip:"
  cuda $OURS $W/ffmpeg vmaf_v1.0.16_3d0h $W/ours_v1_luma.json 2>&1 | grep -v "^\s*$" | head -4
  echo "-- ffmpeg_allplanes (every plane copied), on vmafhip:"
  cuda $OURS $W/ffmpeg_allplanes vmaf_v1.0.16_3d0h $W/ours_v1.json 2>&1 | head -4
  same $W/ours_v1.json $W/c_vmaf_v1.0.16_3d0h.json
  echo "-- ffmpeg_allplanes on libvmaf f85a8536's own:"
  cuda $REAL $W/ffmpeg_allplanes vmaf_v1.0.16_3d0h $W/real_v1.json 2>&1 | tail -4
  [ -s $W/real_v1.json ] && same $W/real_v1.json $W/c_vmaf_v1.0.16_3d0h.json

  echo "== 4. wall time, 1080p H.264 pair ($N frames), $RUNS alternating runs"
  for r in $(seq $RUNS); do
    echo "run $r: decode-only $(seconds decode_only) s, libvmaf-cuda $(seconds cuda $REAL $W/ffmpeg vmaf_v0.6.1 $W/t1.json) s, vmafhip-libvmaf-cuda $(seconds cuda $OURS $W/ffmpeg vmaf_v0.6.1 $W/t2.json) s"
  done | tee $W/times.txt
  medians $W/times.txt

  echo "== 6. the CPU libvmaf filter, the pair as raw 1080p files ($N frames), n_threads=16, $RUNS alternating runs"
  for f in $R $S; do
    LD_LIBRARY_PATH=$OURS $W/ffmpeg -hide_banner -loglevel error -y -i $f -f rawvideo -pix_fmt yuv420p $W/$(basename $f .mp4).yuv
  done
  cpu_filter() {  # cpu_filter LIBPATH BACKEND OUT
    VMAFHIP_BACKEND=$2 LD_LIBRARY_PATH=$1 $W/ffmpeg -hide_banner -nostats -loglevel error \
      -f rawvideo -pix_fmt yuv420p -s 1920x1080 -i $W/pan1080_dis.yuv -f rawvideo -pix_fmt yuv420p -s 1920x1080 -i $W/pan1080_ref.yuv \
      -lavfi "libvmaf=model=version=vmaf_v0.6.1:n_threads=16:log_fmt=json:log_path=$3" -f null -
  }
  for r in $(seq $RUNS); do
    echo "run $r: libvmaf-cpu $(seconds cpu_filter $REAL cpu $W/f_real.json) s, vmafhip-cpu $(seconds cpu_filter $OURS cpu $W/f_cpu.json) s, vmafhip-hip $(seconds cpu_filter $OURS hip $W/f_hip.json) s"
  done | tee $W/times_cpu.txt
  medians $W/times_cpu.txt
  echo "vmafhip's CPU engine, then its GPU engine, against libvmaf's own:"
  same $W/f_cpu.json $W/f_real.json
  same $W/f_hip.json $W/f_real.json
fi

if [ "$PART" = peer ] || [ "$PART" = pictures ]; then
  echo "== 5. tests/c/cuda_pictures: the program's own context, cuMemcpy2D into device pictures"
  G=tests/data/golden A=astronaut_576x324_420p8_12f
  for f in ${A}_ref ${A}_crf35; do zstd -q -d -f $G/$f.yuv.zst -o $W/$f.yuv; done
  for run in "vmaf_v0.6.1 all device" "vmaf_v1.0.16_3d0h all device" "vmaf_v0.6.1 luma device" \
    "vmaf_v1.0.16_3d0h luma device" "vmaf_v0.6.1 all hip" "vmaf_v1.0.16_3d0h all hip"; do
    set -- $run
    echo "\$ cuda_pictures ${A}_ref.yuv ${A}_crf35.yuv 576 324 420 8 $1 $2 $3 out.json"
    rm -f $W/cp.json
    LD_LIBRARY_PATH=$OURS $D/lv/cuda_pictures $W/${A}_ref.yuv $W/${A}_crf35.yuv 576 324 420 8 $1 $2 $3 $W/cp.json 2>&1 \
      | grep -E "state|VMAF score|ERROR|cuda_pictures:"
    [ -s $W/cp.json ] && same $W/cp.json $G/${A}_crf35.$1.json
  done
fi

if [ "$PART" = command ]; then
  . benches/device_gst_env.sh
  zstd -q -d -f $D/bin/vmafhip.zst -o $W/vmafhip && chmod +x $W/vmafhip
  command_run() { $W/vmafhip $R $S --decoder gpu --backend hip --model version=vmaf_v0.6.1 --json -o $W/cmd.json -q; }
  echo "== 7. wall time, 1080p H.264 pair ($N frames), $RUNS alternating runs, with the command"
  echo "\$ vmafhip ref.mp4 dis.mp4 --decoder gpu --backend hip --model version=vmaf_v0.6.1 --json -o cmd.json"
  GST_DEBUG=vmafhip:4 GST_DEBUG_NO_COLOR=1 $W/vmafhip $R $S --decoder gpu --backend hip --model version=vmaf_v0.6.1 --json -o $W/cmd.json 2>&1 | grep -iE "nvdec|staged|VMAF|error" | tail -5
  for r in $(seq $RUNS); do
    echo "run $r: decode-only $(seconds decode_only) s, vmafhip-libvmaf-cuda $(seconds cuda $OURS $W/ffmpeg vmaf_v0.6.1 $W/t2.json) s, vmafhip-command $(seconds command_run) s"
  done | tee $W/times_cmd.txt
  medians $W/times_cmd.txt
  echo "the command's JSON against vmafhip's libvmaf_cuda run:"
  same $W/cmd.json $W/t2.json
fi
