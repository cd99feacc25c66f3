#!/usr/bin/env bash
# On the GPU machine: the float extractors' scaling options (float_vif's
# vif_prescale and its methods, float_motion's motion_add_scale1 and
# motion_add_uv) through the `vmafhip` command, --backend cpu and hip,
# against libvmaf's CLI ($LV, built by ../shared/peer with its float
# extractors; --gpumask keeps it on the CPU) on three golden pairs (8-bit,
# 10-bit, 1080p). Each vmafhip result compared with libvmaf's
# (benches/compare_json.py: 1e-4 on float features and VMAF), and hip with cpu.
#   DEV=.device LV=/tmp/t/inst/bin/vmaf bash benches/float_options_check.sh
set -u
DEV=${DEV:-.device}
LV=${LV:-/tmp/t/inst/bin/vmaf}
. benches/device_gst_env.sh
Z=$(command -v zstd || echo /tmp/gstroot/usr/bin/zstd)
C=/tmp/floatopts
mkdir -p "$C"
G=tests/data/golden
OPTS=(
  "float_vif.vif_prescale=0.5:float_vif.vif_prescale_method=bicubic"
  "float_vif.vif_prescale=1.5:float_vif.vif_prescale_method=bilinear"
  "float_vif.vif_prescale=0.75"
  "float_vif.vif_prescale=1.25:float_vif.vif_prescale_method=lanczos4"
  "float_motion.motion_add_scale1=true"
  "float_motion.motion_add_uv=true"
  "float_motion.motion_add_uv=true:float_motion.motion_filter_size=3"
)
fails=0
for clip in "astronaut_576x324_420p8_12f crf35 576 324 8" "rocket_576x324_420p10_6f crf30 576 324 10" \
  "eveningglow_1920x1080_420p8_3f crf30 1920 1080 8"; do
  set -- $clip
  for f in ref "$2"; do
    [ -f "$C/$1_$f.yuv" ] || "$Z" -q -d "$G/$1_$f.yuv.zst" -o "$C/$1_$f.yuv"
  done
  args=(-r "$C/$1_ref.yuv" -d "$C/$1_$2.yuv" -w "$3" -h "$4" -p 420 -b "$5")
  for o in "${OPTS[@]}"; do
    m="version=vmaf_float_v0.6.1:$o"
    echo "== $1 --model $m"
    "$LV" "${args[@]}" --model "$m" --json -o "$C/lv.json" --gpumask 4294967295 > "$C/lv.log" 2>&1 \
      || { echo "libvmaf FAILED"; tail -3 "$C/lv.log"; fails=$((fails + 1)); continue; }
    for b in cpu hip; do
      "$DEV/bin/vmafhip" "${args[@]}" --model "$m" --backend "$b" --json -o "$C/$b.json" > "$C/$b.log" 2>&1 \
        || { echo "vmafhip --backend $b FAILED"; tail -3 "$C/$b.log"; fails=$((fails + 1)); continue; }
      echo "  $b vs libvmaf: $(python3 benches/compare_json.py "$C/$b.json" "$C/lv.json" || echo MISMATCH)"
    done
    echo "  hip vs cpu: $(python3 benches/compare_json.py "$C/hip.json" "$C/cpu.json" || echo MISMATCH)"
  done
done
echo "failures: $fails"
