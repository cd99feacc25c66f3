#!/usr/bin/env bash
# On the GPU machine: the `vmafhip` command with a float model and the new
# extractors, on the CPU and on the GPU, on two golden pairs; each result
# compared with the other and with libvmaf's golden JSON
# (benches/compare_json.py: 1e-4 on float features and VMAF).
#   DEV=.device bash benches/float_command_check.sh     (.device: benches/device_debs.sh, bin/vmafhip)
set -u
DEV=${DEV:-.device}
. benches/device_gst_env.sh
Z=$(command -v zstd || echo /tmp/gstroot/usr/bin/zstd)
C=/tmp/floatcmd
mkdir -p "$C"
G=tests/data/golden
FEATS="--model version=vmaf_float_v0.6.1 --feature ciede --feature psnr_hvs --feature speed_temporal"
for clip in "eveningglow_1920x1080_420p8_3f crf30 1920 1080" "astronaut_576x324_420p8_12f crf35 576 324"; do
  set -- $clip
  for f in ref "$2"; do
    [ -f "$C/$1_$f.yuv" ] || "$Z" -q -d "$G/$1_$f.yuv.zst" -o "$C/$1_$f.yuv"
  done
  for b in cpu hip; do
    echo "\$ vmafhip -r $1_ref.yuv -d $1_$2.yuv -w $3 -h $4 -p 420 -b 8 $FEATS --backend $b --json -o $1.$b.json"
    "$DEV/bin/vmafhip" -r "$C/$1_ref.yuv" -d "$C/$1_$2.yuv" -w "$3" -h "$4" -p 420 -b 8 $FEATS \
      --backend "$b" --json -o "$C/$1.$b.json" 2>&1 | tail -3
    echo "rc ${PIPESTATUS[0]}"
  done
  echo "hip vs cpu: $(python3 benches/compare_json.py "$C/$1.hip.json" "$C/$1.cpu.json")"
  python3 - "$C/$1.cpu.json" "$C/$1.hip.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
worst = {}
for fa, fb in zip(a["frames"], b["frames"]):
    for k, v in fa["metrics"].items():
        w = fb["metrics"][k]
        worst[k] = max(worst.get(k, 0), 0 if v == w else abs(v - w))
print("largest |hip - cpu| per key:", {k: v for k, v in worst.items() if v > 0} or "none (equal at the printed digits)")
PY
done
GOLD=$G/eveningglow_1920x1080_420p8_3f_crf30.vmaf_float_v0.6.1.speed_temporal.ciede.psnr_hvs.json
for b in cpu hip; do
  echo "$b vs libvmaf (eveningglow golden): $(python3 benches/compare_json.py "$C/eveningglow_1920x1080_420p8_3f.$b.json" "$GOLD")"
done
