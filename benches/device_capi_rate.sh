#!/bin/bash
# On the GPU machine: the C API's frame rate against the engine's, on the
# 1080p golden pair (3 frames, cycled), VMAF v0.
#   1. examples/bench --yuv: the engine's rate (frames preloaded, pinned).
#   2. benches/capi_rate host: per frame two vmaf_picture_alloc pictures
#      filled with memcpy (ffmpeg's CPU libvmaf filter), the GPU engine.
#   3. benches/capi_rate device: device pictures filled with cuMemcpy2D
#      from the program's device memory (libvmaf_cuda on NVDEC frames).
# RUNS alternating runs; each capi_rate line says where the time went.
# Needs DEV/capi (libvmaf.so.3, capi_rate), DEV/debs' zstd; DEV/bin/bench.zst
# for step 1 (skipped without it).
set -eu
D=${DEV:-.device} W=/tmp/capi RUNS=${RUNS:-3} N=${FRAMES:-1200}
mkdir -p $W
if ! command -v zstd > /dev/null; then
  for d in $D/debs/libzstd1_*.deb $D/debs/zstd_*.deb; do dpkg -x $d $W/z; done
  export PATH=$W/z/usr/bin:$PATH LD_LIBRARY_PATH=$W/z/usr/lib/x86_64-linux-gnu
fi
G=tests/data/golden P=eveningglow_1920x1080_420p8_3f
for f in ${P}_ref ${P}_crf30; do zstd -q -d -f $G/$f.yuv.zst -o $W/$f.yuv; done
[ -f $D/bin/bench.zst ] && zstd -q -d -f $D/bin/bench.zst -o $W/bench && chmod +x $W/bench
export VMAFHIP_CACHE_DIR=/tmp/vc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
R=$W/${P}_ref.yuv S=$W/${P}_crf30.yuv
rate() { LD_LIBRARY_PATH=$D/capi:${LD_LIBRARY_PATH:-} $D/capi/capi_rate $R $S 1920 1080 420 8 vmaf_v0.6.1 $1 $N 2>&1; }
for r in $(seq $RUNS); do
  echo "== run $r"
  [ -x $W/bench ] && $W/bench --backend hip --width 1920 --height 1080 --yuv $R,$S --frames $N --runs 1 --no-profile 2>&1 | grep -i "fps" | tail -2
  rate host
  rate device
done
