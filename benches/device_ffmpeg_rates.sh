#!/bin/bash
# On the GPU machine: ffmpeg 7.1.5's libvmaf filters on vmafhip's
# libvmaf.so.3 against libvmaf f85a8536's own, one ffmpeg binary for both
# (linked to libvmaf.so.3, the library chosen by LD_LIBRARY_PATH).
#   1. Numbers: libvmaf_cuda on vmafhip against libvmaf's CPU filter
#      (its C path, with its assembly), VMAF v0.
#   2. libvmaf_cuda (NVDEC frames in GPU memory): RUNS alternating runs of
#      NVDEC decoding alone, NVDEC and scale_cuda (the graph without
#      VMAF), libvmaf's libvmaf_cuda, vmafhip's.
#   3. The CPU libvmaf filter (software decoding): RUNS alternating runs of
#      libvmaf's own (n_threads=16), vmafhip's GPU engine (the default),
#      vmafhip's CPU engine (n_threads=16).
# usage: FF=ffmpeg REAL=dir OURS=dir bash benches/device_ffmpeg_rates.sh REF.mp4 DIST.mp4 FRAMES
# REAL and OURS: folders holding each library's libvmaf.so.3.
set -u
R=$1 S=$2 N=$3 RUNS=${RUNS:-3} W=/tmp/ffr
mkdir -p $W
. benches/device_compare.sh
HW="-hwaccel cuda -hwaccel_output_format cuda"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cuda() {  # cuda LIBDIR OUT: libvmaf_cuda on the NVDEC frames
  LD_LIBRARY_PATH=$1 $FF -hide_banner -nostats -loglevel error $HW -i $S $HW -i $R -filter_complex \
    "[0:v]scale_cuda=format=yuv420p[d];[1:v]scale_cuda=format=yuv420p[r];[d][r]libvmaf_cuda=model=version=vmaf_v0.6.1:log_fmt=json:log_path=$2" \
    -f null -
}
cpu() {  # cpu LIBDIR BACKEND OUT: the CPU filter on software-decoded frames
  VMAFHIP_BACKEND=$2 LD_LIBRARY_PATH=$1 $FF -hide_banner -nostats -loglevel error -i $S -i $R \
    -lavfi "libvmaf=model=version=vmaf_v0.6.1:n_threads=16:log_fmt=json:log_path=$3" -f null -
}
decode_only() { nvdec_decode_only $FF $OURS $S $R; }
decode_scale() {  # the filter graph without VMAF: NVDEC, scale_cuda
  LD_LIBRARY_PATH=$OURS $FF -hide_banner -nostats -loglevel error $HW -i $S $HW -i $R -filter_complex \
    "[0:v]scale_cuda=format=yuv420p[d];[1:v]scale_cuda=format=yuv420p[r]" -map "[d]" -map "[r]" -f null -
}
echo "== 1. libvmaf_cuda on vmafhip against libvmaf's CPU filter"
cpu $REAL cpu $W/c_real.json && cuda $OURS $W/g_ours.json && same $W/g_ours.json $W/c_real.json
LD_LIBRARY_PATH=$OURS $FF -hide_banner -nostats -loglevel debug $HW -i $S $HW -i $R -filter_complex \
  "[0:v]scale_cuda=format=yuv420p[d];[1:v]scale_cuda=format=yuv420p[r];[d][r]libvmaf_cuda=model=version=vmaf_v0.6.1" \
  -f null - 2>&1 | grep "libvmaf .*vmafhip"
echo "== 2. libvmaf_cuda, 1080p H.264 pair ($N frames), $RUNS alternating runs"
for r in $(seq $RUNS); do
  echo "run $r: decode-only $(seconds decode_only) s, decode-scale_cuda $(seconds decode_scale) s, libvmaf-cuda $(seconds cuda $REAL $W/t1.json) s, vmafhip-cuda $(seconds cuda $OURS $W/t2.json) s"
done | tee $W/times.txt
medians $W/times.txt
echo "== 3. the CPU libvmaf filter, software decoding, $RUNS alternating runs"
for r in $(seq $RUNS); do
  echo "run $r: libvmaf-cpu16 $(seconds cpu $REAL cpu $W/f1.json) s, vmafhip-gpu $(seconds cpu $OURS auto $W/f2.json) s, vmafhip-cpu16 $(seconds cpu $OURS cpu $W/f3.json) s"
done | tee $W/times_cpu.txt
medians $W/times_cpu.txt
echo "vmafhip's GPU engine, then its CPU engine, against libvmaf's CPU filter:"
same $W/f2.json $W/f1.json
same $W/f3.json $W/f1.json
