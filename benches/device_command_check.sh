#!/bin/bash
# On the GPU machine: the `vmafhip` command with --backend hip on golden
# pairs (8-bit, 10-bit, the odd 351x287 size whose rows the element's pool
# pads, and PSNR/SSIM so that chroma is read too), each compared with
# libvmaf's JSON; then three of them through --pairs. Needs
# benches/device_gst_env.sh's packages and DEV/bin/vmafhip.
set -u
. benches/device_gst_env.sh
G=tests/data/golden
C=/tmp/check
mkdir -p $C
export VMAFHIP_CACHE_DIR=/tmp/vc PATH=/tmp/gstroot/usr/bin:$PATH
list=$C/pairs.csv
: > $list
for spec in "astronaut_576x324_420p8_12f crf35 576 324 8" "motorcycle_351x287_420p8_5f crf30 351 287 8" \
            "rocket_576x324_420p10_6f crf30 576 324 10"; do
  set -- $spec
  for f in ref $2; do [ -f $C/$1_$f.yuv ] || zstd -q -d $G/$1_$f.yuv.zst -o $C/$1_$f.yuv; done
  "$D/bin/vmafhip" -r $C/$1_ref.yuv -d $C/$1_$2.yuv -w $3 -h $4 -b $5 --backend hip \
    --feature psnr --feature float_ssim --feature float_ms_ssim --json -o $C/$1.json 2>&1 | grep "^VMAF"
  echo -n "$1 $2 (hip, chroma read): "
  python3 benches/compare_json.py $C/$1.json $G/$1_$2.vmaf_v0.6.1.json
  echo "$C/$1_ref.yuv,$C/$1_$2.yuv,$C/$1.pairs.json" >> $list
done
# Luma only (no PSNR): the readers skip chroma.
"$D/bin/vmafhip" -r $C/astronaut_576x324_420p8_12f_ref.yuv -d $C/astronaut_576x324_420p8_12f_crf35.yuv -w 576 -h 324 \
  --backend hip --model version=vmaf_v1.0.16_3d0h --json -o $C/v1.json 2>&1 | grep "^VMAF"
echo -n "astronaut crf35 v1 (hip, luma only): "
python3 benches/compare_json.py $C/v1.json $G/astronaut_576x324_420p8_12f_crf35.vmaf_v1.0.16_3d0h.json
# The 576x324 pairs again through --pairs (one -w -h for all: the two 576x324 8-bit ones).
head -1 $list > $C/pairs2.csv
"$D/bin/vmafhip" --pairs $C/pairs2.csv -w 576 -h 324 --backend hip --feature psnr --feature float_ssim --feature float_ms_ssim
echo -n "--pairs astronaut crf35: "
python3 benches/compare_json.py $C/astronaut_576x324_420p8_12f.pairs.json $G/astronaut_576x324_420p8_12f_crf35.vmaf_v0.6.1.json
