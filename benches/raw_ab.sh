#!/bin/bash
# A/B on the GPU machine: the command on the raw 1080p and 2160p clips of
# benches/e2e_bench.sh (made first by it, in /tmp/e2e), reading into the
# element's pinned pool (A) or into its own pool with the element copying on
# arrival (B, VMAFHIP_READ_INTO_POOL=0), alternating, ROUNDS rounds.
set -u
ROUNDS=${ROUNDS:-4}
. benches/device_gst_env.sh
C=/tmp/e2e
t() { local s e; s=$(date +%s.%N); "$@" -q; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN {printf "%.3f", e - s}'; }
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    [ $v = B ] && export VMAFHIP_READ_INTO_POOL=0 || unset VMAFHIP_READ_INTO_POOL
    a=$(t "$D/bin/vmafhip" -r $C/1080p8_ref.yuv -d $C/1080p8_dis.yuv -w 1920 -h 1080 --backend hip)
    b=$(t "$D/bin/vmafhip" -r $C/k/2160p8_ref.yuv -d $C/k/2160p8_dis.yuv -w 3840 -h 2160 --backend hip --model version=vmaf_4k_v0.6.1)
    echo "round $r $v: 1080p $(awk -v t="$a" 'BEGIN {printf "%.1f", 3000 / t}') fps, 2160p $(awk -v t="$b" 'BEGIN {printf "%.1f", 600 / t}') fps"
  done
done
unset VMAFHIP_READ_INTO_POOL
"$D/bin/bench" --backend hip --width 1920 --height 1080 --frames 3000 --runs 3 --no-profile 2>/dev/null | grep "engine fps"
