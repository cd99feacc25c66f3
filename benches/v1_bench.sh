#!/usr/bin/env bash
# VMAF v1 benchmark on a GPU machine: vmafhip's engine (examples/bench,
# upload included, median of 5 runs) and, when LIBVMAF names a libvmaf `vmaf`
# CLI, libvmaf's CPU path with $THREADS threads on the very same files
# (wall clock of 3 runs, median). Clips come from benches/make_bench_clips.py.
#
#   CLIPS=/tmp/clips BENCH=.device/bin/bench LIBVMAF=.device/bin/libvmaf_vmaf sh benches/v1_bench.sh
set -eu
CLIPS=${CLIPS:-/tmp/clips}
BENCH=${BENCH:-target/release/examples/bench}
MODEL=${MODEL:-vmaf_v1.0.16_3d0h}
THREADS=${THREADS:-16}
FRAMES=${FRAMES:-300}
for cfg in "1920 1080 8 1080p8" "1920 1080 10 1080p10" "3840 2160 8 2160p8" "3840 2160 10 2160p10"; do
  set -- $cfg
  echo "== $4 $MODEL"
  "$BENCH" --backend hip --width "$1" --height "$2" --bpc "$3" \
    --yuv "$CLIPS/$4_ref.yuv,$CLIPS/$4_dis.yuv" --distinct 3 --frames 600 --runs 5 --model "$MODEL"
  if [ -n "${LIBVMAF:-}" ]; then
    for run in 1 2 3; do
      s=$(date +%s.%N)
      "$LIBVMAF" -r "$CLIPS/$4_ref.yuv" -d "$CLIPS/$4_dis.yuv" -w "$1" -h "$2" -p 420 -b "$3" \
        --model "version=$MODEL" --threads "$THREADS" --json -o "/tmp/libvmaf_$4.json" >/dev/null 2>&1
      e=$(date +%s.%N)
      echo "libvmaf cpu ($THREADS threads) $4 run $run: $(echo "$FRAMES $s $e" | awk '{printf "%.1f fps", $1/($3-$2)}')"
    done
    python3 -c "import json,sys; print('libvmaf pooled vmaf', json.load(open('/tmp/libvmaf_$4.json'))['pooled_metrics']['vmaf']['mean'])"
  fi
done
# The CPU engines beside each other on the 1080p 8-bit clip: vmafhip's
# (VMAFHIP_YUV names examples/vmaf_yuv) and libvmaf's, $THREADS threads.
if [ -n "${VMAFHIP_YUV:-}" ] && [ -n "${LIBVMAF:-}" ]; then
  for run in 1 2 3; do
    for tool in vmafhip libvmaf; do
      bin=$VMAFHIP_YUV; [ $tool = libvmaf ] && bin=$LIBVMAF
      s=$(date +%s.%N)
      "$bin" -r "$CLIPS/1080p8_ref.yuv" -d "$CLIPS/1080p8_dis.yuv" -w 1920 -h 1080 -p 420 -b 8 \
        --model "version=$MODEL" --threads "$THREADS" --json -o "/tmp/cpu_$tool.json" >/dev/null 2>&1
      e=$(date +%s.%N)
      echo "cpu engine $tool ($THREADS threads) 1080p8 run $run: $(echo "$FRAMES $s $e" | awk '{printf "%.1f fps", $1/($3-$2)}')"
    done
  done
fi
